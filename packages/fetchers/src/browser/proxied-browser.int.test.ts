import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startForwardProxy, startTestServer, type ForwardProxy, type TestServer } from '@crawler/testkit';
import { createPlaywrightFetcher, type PlaywrightFetcher } from './playwright-fetcher.js';
import { createStealthFetcher } from './stealth.js';
import { FetchError } from '../errors.js';
import { exitFailureScope } from '../http/proxy-connector.js';

/** The page shows the address the site saw, so the test reads which exit the browser left from. */
const whoami = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(`<!doctype html><html><head><title>who</title></head><body><article><h1>Client</h1><p id="addr">${req.socket.remoteAddress}</p><p>${'Words of an ordinary article page. '.repeat(20)}</p></article></body></html>`);
};

async function failureCode(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return (err as FetchError).code;
  }
}

describe('browsers through an exit', () => {
  let site: TestServer;
  let other: TestServer;
  let res: ForwardProxy;
  let browser: PlaywrightFetcher;
  let guarded: PlaywrightFetcher;

  beforeAll(async () => {
    site = await startTestServer({ '/': whoami }, { host: '127.0.1.31' });
    other = await startTestServer({ '/': whoami }, { host: '127.0.1.32' });
    res = await startForwardProxy({ localAddress: '127.0.3.1', auth: { user: 'resUser', pass: 'resPa55' } });
    browser = createPlaywrightFetcher({ allowPrivateNetworks: true });
    // The guard lets the site through and nothing else of loopback: a proxied context must not reach `other`.
    guarded = createPlaywrightFetcher({ allowHosts: ['127.0.1.31'] });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([browser?.close(), guarded?.close(), res?.close(), site?.close(), other?.close()]);
  });

  it('leaves from the context\'s proxy (with its credentials), and direct without one', async () => {
    const viaProxy = await browser.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: res.authUrl } });
    expect(viaProxy.text).toContain('<p id="addr">127.0.3.1</p>');
    expect(viaProxy.exitTier).toBe('residential');
    const direct = await browser.fetch({ url: site.url('/') });
    expect(direct.text).toContain('<p id="addr">127.0.0.1</p>');
    expect(res.tunnels).toBeGreaterThan(0);
  }, 60_000);

  it('leaves from the proxy with the stealth browser too', async () => {
    const stealth = createStealthFetcher({ allowPrivateNetworks: true });
    try {
      const r = await stealth.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: res.authUrl } });
      expect(r.text).toContain('<p id="addr">127.0.3.1</p>');
    } finally {
      await stealth.close();
    }
  }, 60_000);

  it('keeps the egress guard on a proxied context: a target outside the policy never reaches the proxy', async () => {
    const before = res.tunnels;
    const ok = await guarded.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: res.authUrl } });
    expect(ok.text).toContain('127.0.3.1');
    const tunnelsAfterOk = res.tunnels;
    expect(tunnelsAfterOk).toBeGreaterThan(before);
    let err: unknown;
    try {
      await guarded.fetch({ url: other.url('/'), exit: { tier: 'residential', proxyUrl: res.authUrl } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FetchError);
    expect((err as FetchError).code).toBe('blocked_address');
    expect(res.tunnels).toBe(tunnelsAfterOk);
    expect(other.hits()).toBe(0);
  }, 60_000);

  it('keeps shared clearance per exit: a context through a proxy loads the clearance of that exit only', async () => {
    const loads: string[] = [];
    const clearance = { load: async (_site: string, flavour: string) => (loads.push(flavour), []), save: async () => undefined };
    const f = createPlaywrightFetcher({ allowPrivateNetworks: true }, { clearance });
    try {
      await f.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: res.authUrl } });
      await f.fetch({ url: site.url('/') });
    } finally {
      await f.close();
    }
    expect(loads).toHaveLength(2);
    expect(loads[0]).toMatch(/^playwright@[0-9a-f]{16}$/);
    expect(loads[1]).toBe('playwright');
  }, 60_000);

  it('calls a dead upstream proxy proxy_unavailable, naming no credential', async () => {
    const dead = await startForwardProxy({ auth: { user: 'deadUser', pass: 'deadPa55' } });
    const url = dead.authUrl;
    await dead.kill();
    let err: unknown;
    try {
      await browser.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: url } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FetchError);
    expect((err as FetchError).code).toBe('proxy_unavailable');
    expect(`${(err as Error).message} ${JSON.stringify(err)}`).not.toMatch(/deadUser|deadPa55/);
  }, 60_000);

  it("calls the upstream proxy's own refusal of the site (CONNECT 403) proxy_unavailable for that site only", async () => {
    const acl = await startForwardProxy({ localAddress: '127.0.3.3', refuse: (host) => host === '127.0.1.31' });
    try {
      let err: unknown;
      try {
        await browser.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: acl.url } });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FetchError);
      expect((err as FetchError).code).toBe('proxy_unavailable');
      expect(exitFailureScope(err)).toBe('target');
      const fine = await browser.fetch({ url: other.url('/'), exit: { tier: 'residential', proxyUrl: acl.url } });
      expect(fine.text).toContain('<p id="addr">127.0.3.3</p>');
    } finally {
      await acl.close();
    }
  }, 60_000);

  it('blames a dead site, not the proxy, when the proxy answers its CONNECT 503 (Squid) or closes it (proxy-chain)', async () => {
    const gone = await startTestServer({}, { host: '127.0.1.33' });
    const deadUrl = gone.url('/');
    await gone.close();
    for (const onUnreachable of ['503', 'close'] as const) {
      const proxy = await startForwardProxy({ onUnreachable, localAddress: '127.0.3.2', auth: { user: 'sqUser', pass: 'sqPa55' } });
      try {
        for (let i = 0; i < 2; i++) {
          let err: unknown;
          try {
            await browser.fetch({ url: deadUrl, exit: { tier: 'residential', proxyUrl: proxy.authUrl } });
          } catch (e) {
            err = e;
          }
          expect(err, onUnreachable).toBeInstanceOf(FetchError);
          expect((err as FetchError).code, onUnreachable).toBe('network_error');
          expect(`${(err as Error).message} ${JSON.stringify(err)}`).not.toMatch(/sqUser|sqPa55/);
        }
        const ok = await browser.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: proxy.authUrl } });
        expect(ok.text).toContain('<p id="addr">127.0.3.2</p>');
      } finally {
        await proxy.close();
      }
    }
  }, 60_000);

  it("calls a proxy that fails a site another proxy of its tier reaches proxy_unavailable for that site, as plain HTTP does", async () => {
    // Before, the browsers' egress proxy knew no tier: a proxy down for every site while only one site was crawled
    // failed that site's pages as network_error (the site blamed, an attempt logged each time, no other exit tried).
    const good = await startForwardProxy({ localAddress: '127.0.3.5' });
    // Takes every connection and closes every CONNECT.
    const bad = net.createServer((c) => c.once('data', () => c.destroy()));
    await new Promise<void>((resolve) => bad.listen(0, '127.0.0.1', resolve));
    const badUrl = `http://127.0.0.1:${(bad.address() as AddressInfo).port}`;
    const f = createPlaywrightFetcher({ allowPrivateNetworks: true });
    try {
      const ok = await f.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: good.url } });
      expect(ok.text).toContain('<p id="addr">127.0.3.5</p>');
      let err: unknown;
      try {
        await f.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: badUrl } });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FetchError);
      expect((err as FetchError).code, (err as Error).message).toBe('proxy_unavailable');
      expect(exitFailureScope(err)).toBe('target');
      // Another tier's proxy is no evidence: a site that serves residential addresses may drop datacenter ones.
      const other = await failureCode(f.fetch({ url: site.url('/'), exit: { tier: 'datacenter', proxyUrl: badUrl } }));
      expect(other).toBe('network_error');
    } finally {
      await f.close();
      await good.close();
      bad.close();
    }
  }, 60_000);

  it("closes an exit's loopback listener once no context leaves through it (a sticky session per site would pile them up)", async () => {
    const gateway = await startForwardProxy({ localAddress: '127.0.3.4' });
    const f = createPlaywrightFetcher({ allowPrivateNetworks: true, browser: { contextIdleMs: 200 } });
    const sessionUrl = (id: string) => gateway.url.replace('http://', `http://cust-session-${id}:pw@`);
    try {
      for (const id of ['s1', 's2', 's3']) {
        const r = await f.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: sessionUrl(id) } });
        expect(r.text).toContain('<p id="addr">127.0.3.4</p>');
      }
      await expect.poll(() => f.pool.stats().egress?.exitListeners, { timeout: 15_000, interval: 100 }).toBe(0);
      // A session whose listener was closed gets a new one.
      const again = await f.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: sessionUrl('s1') } });
      expect(again.text).toContain('<p id="addr">127.0.3.4</p>');
    } finally {
      await f.close();
      await gateway.close();
    }
  }, 60_000);
});
