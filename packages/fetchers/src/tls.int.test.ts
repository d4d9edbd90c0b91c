import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestCa, startTestServer, staticArticle, type TestCa, type TestServer } from '@crawler/testkit';
import { createDefaultRegistry, type FetcherRegistry } from './registry.js';
import { FetchError } from './errors.js';

const FETCHERS = ['simple_http', 'playwright', 'playwright_stealth'] as const;

async function outcome(registry: FetcherRegistry, fetcher: string, url: string, timeoutMs = 20_000): Promise<string> {
  try {
    const r = await registry.get(fetcher).fetch({ url, timeoutMs });
    return `status ${r.status}`;
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    return `${err.code}: ${err.message}`;
  }
}

describe('fetchers over TLS', () => {
  let ca: TestCa;
  let untrusted: TestServer;
  let hang: TcpServer;
  const hung = new Set<Socket>();
  let h2only: Http2SecureServer;
  let registry: FetcherRegistry;
  beforeAll(async () => {
    ca = createTestCa();
    const leaf = ca.issue({ hosts: ['127.0.0.1', 'localhost'] });
    untrusted = await startTestServer({ '/': { body: staticArticle({ title: 'Secure' }) } }, { tls: leaf });
    hang = createTcpServer((s) => hung.add(s));
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    h2only = createSecureServer({ ...leaf, allowHTTP1: false }, (_req, res) => res.end(staticArticle({ title: 'H2' })));
    await new Promise<void>((r) => h2only.listen(0, '127.0.0.1', r));
    registry = createDefaultRegistry({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    await registry?.closeAll();
    for (const s of hung) s.destroy();
    hang?.close();
    h2only?.close();
    await untrusted?.close();
  });

  for (const f of FETCHERS) {
    it(`${f}: a certificate from a CA nobody trusts is a tls_error`, async () => {
      expect(await outcome(registry, f, untrusted.url('/'))).toMatch(/^tls_error: .*(UNABLE_TO_VERIFY|ERR_CERT_AUTHORITY_INVALID)/);
    });
    it(`${f}: a server that accepts TCP and never finishes the TLS handshake is a timeout`, async () => {
      expect(await outcome(registry, f, `https://127.0.0.1:${(hang.address() as AddressInfo).port}/`, 4_000)).toMatch(/^timeout: /);
    });
  }

  it('simple_http: an HTTP/2-only server is the wrong tool (a browser speaks h2), said plainly', async () => {
    expect(await outcome(registry, 'simple_http', `https://127.0.0.1:${(h2only.address() as AddressInfo).port}/`)).toMatch(/^wrong_tool: .*HTTP\/2/);
  });
});
