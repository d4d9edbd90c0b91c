/**
 * Responses written byte for byte (a raw TCP server), in the shapes browsers accept and undici's parser refuses. What
 * Chromium 14x does with each, measured with the same bytes: loads the page for a bare LF, an unasked-for
 * `100 Continue` and a Content-Length sent twice with one value; refuses two different lengths
 * (ERR_RESPONSE_HEADERS_MULTIPLE_CONTENT_LENGTH); aborts the navigation of a 204 (ERR_ABORTED).
 */
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawHttpHandler } from '@crawler/testkit';
import { createHttpFetcher, type HttpFetcher } from './http-fetcher.js';
import { FetchError } from '../errors.js';

const PAGE = '<html><head><title>Quirk</title></head><body><p>A paragraph of the article.</p></body></html>';

const RESPONSES: Record<string, string> = {
  '/bare-lf': `HTTP/1.1 200 OK\ncontent-type: text/html\ncontent-length: ${PAGE.length}\n\n${PAGE}`,
  '/continue': `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${PAGE.length}\r\n\r\n${PAGE}`,
  '/length-twice': `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${PAGE.length}\r\ncontent-length: ${PAGE.length}\r\n\r\n${PAGE}`,
  '/no-content-with-body': `HTTP/1.1 204 No Content\r\ncontent-type: text/html\r\ncontent-length: ${PAGE.length}\r\n\r\n${PAGE}`,
  // Not quirks: a body cut short after its head, and a chunked body with a bad chunk size. Both fail as before.
  '/short-body': `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${PAGE.length + 500}\r\n\r\n${PAGE}`,
  '/bad-chunk': `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\n\r\nf\r\n<html><head><ti\r\nzz\r\n`,
  // Not HTTP at all (a service on the wrong port, a tarpit): no status line for any client to read.
  '/not-http': 'SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n\r\n',
};

async function outcome(p: Promise<{ status: number; body: Uint8Array; text: string | null }>): Promise<string> {
  try {
    const r = await p;
    return `status ${r.status} ${r.body.length} bytes ${/<title>([^<]*)<\/title>/.exec(r.text ?? '')?.[1] ?? ''}`.trim();
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    return `${err.code}: ${err.message}`;
  }
}

describe('simple_http and responses browsers tolerate', () => {
  let server: net.Server;
  let origin: string;
  let http: HttpFetcher;
  const requests: string[] = [];

  beforeAll(async () => {
    server = net.createServer(
      rawHttpHandler((_head, path) => {
        requests.push(path);
        return { bytes: RESPONSES[path] ?? 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n' };
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    http = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
  });

  afterAll(async () => {
    await http?.close();
    server?.close();
  });

  const fetch = (path: string) => outcome(http.fetch({ url: `${origin}${path}`, timeoutMs: 5_000 }));

  it('a head the parser refuses and a browser reads is wrong_tool (the browser gets the page), not a network_error to retry', async () => {
    expect(await fetch('/bare-lf')).toMatch(/^wrong_tool: plain HTTP cannot parse the response, a browser can: .*Missing expected CR/);
    expect(await fetch('/continue')).toMatch(/^wrong_tool: .*100 Continue/);
    expect(await fetch('/length-twice')).toMatch(/^wrong_tool: .*Content-Length/);
  });

  it('a 204 that sends a Content-Length and a body is the 204 it says it is, with no body', async () => {
    expect(await fetch('/no-content-with-body')).toBe('status 204 0 bytes');
  });

  it('a body cut short after its head is still a network_error, and a bad chunk a protocol_error', async () => {
    expect(await fetch('/short-body')).toMatch(/^network_error: .*\(\d+ of \d+ body bytes received\)$/);
    expect(await fetch('/bad-chunk')).toMatch(/^protocol_error: .*chunk size/);
  });

  it('an answer that is not HTTP at all is a protocol_error, not a page for a browser to fetch', async () => {
    expect(await fetch('/not-http')).toMatch(/^protocol_error: .*Expected HTTP\//);
  });
});
