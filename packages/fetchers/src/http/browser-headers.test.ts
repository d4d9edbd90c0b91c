import { describe, expect, it } from 'vitest';
import { browserLikeHeaders } from './browser-headers.js';

const chrome = (major: number) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;

describe('browser-like request headers', () => {
  it('offers the codings the Chrome it names offers, in its order: zstd from Chrome 123 on', () => {
    expect(browserLikeHeaders(chrome(138))['accept-encoding']).toBe('gzip, deflate, br, zstd');
    expect(browserLikeHeaders(chrome(123))['accept-encoding']).toBe('gzip, deflate, br, zstd');
    expect(browserLikeHeaders(chrome(122))['accept-encoding']).toBe('gzip, deflate, br');
    // A user agent that names no Chrome gets the default one's headers.
    expect(browserLikeHeaders('curl/8.5.0')['accept-encoding']).toBe('gzip, deflate, br, zstd');
  });

  it('gives client hints that agree with the user agent', () => {
    expect(browserLikeHeaders(chrome(131))).toMatchObject({ 'sec-ch-ua': expect.stringContaining('"Chromium";v="131"'), 'sec-ch-ua-platform': '"Windows"' });
  });
});
