import { describe, expect, it } from 'vitest';
import { InvalidUrlError } from '../contracts/errors.js';
import { parseHttpUrl } from './parse-http-url.js';

function messageOf(raw: string): string {
  try {
    parseHttpUrl(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidUrlError);
    return (err as Error).message;
  }
  throw new Error(`${raw} parsed`);
}

describe('parseHttpUrl', () => {
  it('parses http and https URLs', () => {
    expect(parseHttpUrl(' https://Example.com/a ').href).toBe('https://example.com/a');
    expect(parseHttpUrl('http://127.0.0.1:8080/x').port).toBe('8080');
  });

  it('says what is missing when a URL was written without its scheme', () => {
    expect(messageOf('example.com/page')).toBe('unparsable URL: example.com/page (no scheme: did you mean https://example.com/page?)');
    expect(messageOf('127.0.0.1:8080/docs')).toBe('unparsable URL: 127.0.0.1:8080/docs (no scheme: did you mean https://127.0.0.1:8080/docs?)');
    // The WHATWG parser reads "host:port" as a scheme of that name.
    expect(messageOf('localhost:8080/x')).toBe('unsupported scheme localhost (only http and https) (no scheme: did you mean https://localhost:8080/x?)');
    expect(messageOf('example.com:8080')).toBe('unsupported scheme example.com (only http and https) (no scheme: did you mean https://example.com:8080?)');
  });

  it('says what is missing when the colon after the scheme is', () => {
    expect(messageOf('http//example.com/a')).toBe('unparsable URL: http//example.com/a (did you mean http://example.com/a?)');
    expect(messageOf('HTTPS//example.com')).toBe('unparsable URL: HTTPS//example.com (did you mean HTTPS://example.com?)');
  });

  it('gives no guess where there is none to give', () => {
    expect(messageOf('ftp://example.com/')).toBe('unsupported scheme ftp (only http and https)');
    expect(messageOf('mailto:a@example.com')).toBe('unsupported scheme mailto (only http and https)');
    expect(messageOf('not a url')).toBe('unparsable URL: not a url');
    // A list file that is not there is no site to guess.
    expect(messageOf('urls.txt')).toBe('unparsable URL: urls.txt');
    expect(messageOf('seeds.CSV')).toBe('unparsable URL: seeds.CSV');
    expect(messageOf('')).toBe('URL is empty');
  });
});
