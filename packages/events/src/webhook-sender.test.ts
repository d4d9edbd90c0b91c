/** fetchSender against a loopback receiver: a WEBHOOK_URL that carries credentials (a receiver behind basic auth). */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchSender } from './dispatcher.js';

let receiver: Server;
let port: number;
const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    req.resume().on('end', () => res.writeHead(req.headers.authorization ? 204 : 401).end());
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  port = (receiver.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((r) => receiver.close(r));
});

describe('fetchSender', () => {
  it('sends the credentials of a WEBHOOK_URL as basic auth, as curl does, instead of failing with them in its message', async () => {
    // fetch refuses a URL with credentials; its TypeError repeats the whole URL, password included, into the
    // dispatcher's warning and the event's last_error at every retry.
    const result = await fetchSender(`http://hook%40user:p%3Ass%2Fw0rd@127.0.0.1:${port}/hook?x=1`, '{}', { 'content-type': 'application/json' }, 5_000).then(
      (status) => ({ status }),
      (err: Error) => ({ error: err.message }),
    );
    expect(result).toEqual({ status: 204 });
    const last = seen.at(-1)!;
    expect(last.url).toBe('/hook?x=1');
    expect(last.headers.authorization).toBe(`Basic ${Buffer.from('hook@user:p:ss/w0rd').toString('base64')}`);
    expect(last.headers['content-type']).toBe('application/json');
  });

  it('sends no Authorization to a URL without credentials', async () => {
    expect(await fetchSender(`http://127.0.0.1:${port}/plain`, '{}', {}, 5_000)).toBe(401);
    expect(seen.at(-1)!.headers.authorization).toBeUndefined();
  });
});
