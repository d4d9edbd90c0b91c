import { get } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestCa, startTestServer, type TestCa, type TestServer } from './index.js';

/** GET over HTTPS trusting only `ca`: the status, or the TLS error's code. */
function fetchWith(url: string, ca: string): Promise<number | string> {
  return new Promise((resolve) => {
    get(url, { ca }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('createTestCa with an HTTPS test server', () => {
  let ca: TestCa;
  let good: TestServer;
  let expired: TestServer;
  let wrongHost: TestServer;
  beforeAll(async () => {
    ca = createTestCa();
    const routes = { '/': { body: 'ok' } };
    good = await startTestServer(routes, { tls: ca.issue({ hosts: ['localhost', '127.0.0.1'] }) });
    expired = await startTestServer(routes, { tls: ca.issue({ hosts: ['127.0.0.1'], notBefore: new Date(Date.now() - 2 * 864e5), notAfter: new Date(Date.now() - 864e5) }) });
    wrongHost = await startTestServer(routes, { tls: ca.issue({ hosts: ['127.0.0.2'] }) });
  });
  afterAll(async () => {
    await Promise.all([good, expired, wrongHost].map((s) => s?.close()));
  });

  it('serves https:// and verifies against the CA it was issued by, and no other', async () => {
    expect(good.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(await fetchWith(good.url('/'), ca.cert)).toBe(200);
    expect(await fetchWith(good.url('/'), createTestCa('another CA').cert)).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('issues expired leaves and leaves for other hosts on request', async () => {
    expect(await fetchWith(expired.url('/'), ca.cert)).toBe('CERT_HAS_EXPIRED');
    expect(await fetchWith(wrongHost.url('/'), ca.cert)).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('gives the CA SPKI hash in base64', () => {
    expect(ca.spkiSha256).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });
});
