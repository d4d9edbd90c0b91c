import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startForwardProxy, startTestServer, staticArticle, type ForwardProxy, type TestServer } from '@crawler/testkit';
import { PROXY_POOLS_KEPT, createHttpFetcher, type HttpFetcher } from './http-fetcher.js';
import { FetchError } from '../errors.js';
import { PROXY_STALL_TARGETS, exitFailureScope } from './proxy-connector.js';

async function failureOf(p: Promise<unknown>): Promise<FetchError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FetchError);
    return err as FetchError;
  }
  throw new Error('expected the fetch to fail');
}

describe('simple_http through an exit', () => {
  let site: TestServer;
  let dc: ForwardProxy;
  let res: ForwardProxy;
  let http: HttpFetcher;
  let guarded: HttpFetcher;

  beforeAll(async () => {
    site = await startTestServer({
      '/': { body: staticArticle({ title: 'Harbour news' }) },
      // The client's address as the site sees it.
      '/whoami': (req, out) => {
        out.setHeader('content-type', 'text/plain');
        out.end(req.socket.remoteAddress ?? '');
      },
    });
    dc = await startForwardProxy({ localAddress: '127.0.2.1', auth: { user: 'alice', pass: 's3cret' } });
    res = await startForwardProxy({ localAddress: '127.0.3.1', protocol: 'socks5', auth: { user: 'bob', pass: 'hunter2' } });
    http = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
    guarded = createHttpFetcher({ connectTimeoutMs: 2_000 });
  });

  afterAll(async () => {
    await Promise.all([http?.close(), guarded?.close(), dc?.close(), res?.close(), site?.close()]);
  });

  it('leaves from the HTTP proxy (CONNECT with credentials) and reports the tier', async () => {
    const r = await http.fetch({ url: site.url('/whoami'), exit: { tier: 'datacenter', proxyUrl: dc.authUrl } });
    expect(r.text).toBe('127.0.2.1');
    expect(r.exitTier).toBe('datacenter');
    const page = await http.fetch({ url: site.url('/'), exit: { tier: 'datacenter', proxyUrl: dc.authUrl } });
    expect(page.text).toContain('Harbour news');
    expect(dc.tunnels).toBeGreaterThan(0);
  });

  it('leaves from the SOCKS5 proxy with credentials', async () => {
    const r = await http.fetch({ url: site.url('/whoami'), exit: { tier: 'residential', proxyUrl: res.authUrl } });
    expect(r.text).toBe('127.0.3.1');
  });

  it('leaves from the worker itself on direct', async () => {
    const r = await http.fetch({ url: site.url('/whoami'), exit: { tier: 'direct', proxyUrl: null } });
    expect(r.text).toBe('127.0.0.1');
  });

  it('calls refused credentials, a dead proxy and a silent proxy proxy_unavailable, never quoting credentials', async () => {
    const wrongHttp = dc.authUrl.replace('s3cret', 'wrongpass');
    const wrongSocks = res.authUrl.replace('hunter2', 'wrongpass');
    const dead = await startForwardProxy();
    const deadUrl = dead.url.replace('http://', 'http://carol:topsecret@');
    await dead.kill();
    // Accepts and never answers.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = `socks5://dave:hidden@127.0.0.1:${(silent.address() as AddressInfo).port}`;
    for (const proxyUrl of [wrongHttp, wrongSocks, deadUrl, silentUrl]) {
      const err = await failureOf(http.fetch({ url: site.url('/'), exit: { tier: 'datacenter', proxyUrl } }));
      expect(err.code, proxyUrl).toBe('proxy_unavailable');
      const shown = `${err.message} ${JSON.stringify(err)} ${String(err.stack)}`;
      for (const secret of ['wrongpass', 'topsecret', 'hidden', 'alice', 'bob', 'carol', 'dave']) expect(shown).not.toContain(secret);
    }
    silent.close();
  });

  it('blames the site, not the proxy, when the target is down', async () => {
    const gone = await startTestServer({});
    const url = gone.url('/');
    await gone.close();
    const viaHttp = await failureOf(http.fetch({ url, exit: { tier: 'datacenter', proxyUrl: dc.authUrl } }));
    expect(viaHttp.code).toBe('network_error');
    const viaSocks = await failureOf(http.fetch({ url, exit: { tier: 'residential', proxyUrl: res.authUrl } }));
    expect(viaSocks.code).toBe('network_error');
  });

  it('blames a dead site, not the proxy, when the proxy reports it as Squid (503) or proxy-chain (closing the CONNECT) do', async () => {
    const gone = await startTestServer({});
    // Another loopback address: another site than the live one this fetcher reached through another proxy.
    const deadUrl = gone.url('/').replace('127.0.0.1', '127.0.0.41');
    await gone.close();
    for (const onUnreachable of ['503', 'close'] as const) {
      const proxy = await startForwardProxy({ onUnreachable, auth: { user: 'erin', pass: 'pr0xy' } });
      try {
        const proxyUrl = proxy.authUrl;
        // Many links of the dead site in a row still blame the site: a single target says nothing of the proxy.
        for (let i = 0; i < 4; i++) {
          const err = await failureOf(http.fetch({ url: deadUrl, exit: { tier: 'datacenter', proxyUrl } }));
          expect(err.code, onUnreachable).toBe('network_error');
          expect(err.message).not.toContain('pr0xy');
        }
        const r = await http.fetch({ url: site.url('/whoami'), exit: { tier: 'datacenter', proxyUrl } });
        expect(r.status).toBe(200);
      } finally {
        await proxy.close();
      }
    }
  });

  it('blames the proxy once it failed several different sites and tunnelled none (closing, or silent after accepting)', async () => {
    for (const behaviour of ['close', 'silent'] as const) {
      const proxy = net.createServer((c) => (behaviour === 'close' ? c.once('data', () => c.destroy()) : undefined));
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const proxyUrl = `http://frank:pr0xy@127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const fetcher = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 300 });
      try {
        const codes: string[] = [];
        // Distinct loopback addresses are distinct sites (one address's ports are one site).
        for (let i = 0; i < PROXY_STALL_TARGETS; i++) codes.push((await failureOf(fetcher.fetch({ url: `http://127.0.0.${30 + i}:${site.port}/`, exit: { tier: 'datacenter', proxyUrl } }))).code);
        const siteCode = behaviour === 'close' ? 'network_error' : 'timeout';
        expect(codes, behaviour).toEqual([...Array.from({ length: PROXY_STALL_TARGETS - 1 }, () => siteCode), 'proxy_unavailable']);
      } finally {
        await fetcher.close();
        proxy.close();
      }
    }
  });

  it('keeps a bounded number of pools when a sticky-session tier gives every site its own proxy URL', async () => {
    const gateway = await startForwardProxy({ localAddress: '127.0.3.3' });
    const fetcher = createHttpFetcher({ allowPrivateNetworks: true });
    try {
      for (let i = 0; i < PROXY_POOLS_KEPT + 4; i++) {
        const r = await fetcher.fetch({ url: site.url('/whoami'), exit: { tier: 'residential', proxyUrl: gateway.url.replace('http://', `http://cust-session-${i}:pw@`) } });
        expect(r.status).toBe(200);
      }
      expect(fetcher.proxyPools).toBeLessThanOrEqual(PROXY_POOLS_KEPT);
      // A session whose pool was closed still gets its pages.
      const again = await fetcher.fetch({ url: site.url('/whoami'), exit: { tier: 'residential', proxyUrl: gateway.url.replace('http://', 'http://cust-session-0:pw@') } });
      expect(new TextDecoder().decode(again.body)).toBe('127.0.3.3');
    } finally {
      await fetcher.close();
      await gateway.close();
    }
  });

  it('keeps the SSRF guard on the target through a proxy', async () => {
    const before = dc.tunnels;
    const err = await failureOf(guarded.fetch({ url: site.url('/'), exit: { tier: 'datacenter', proxyUrl: dc.authUrl } }));
    expect(err.code).toBe('blocked_address');
    const named = await failureOf(guarded.fetch({ url: `http://localhost:${site.port}/`, exit: { tier: 'datacenter', proxyUrl: dc.authUrl } }));
    expect(named.code).toBe('blocked_address');
    expect(dc.tunnels).toBe(before);
  });
});


describe('a proxy refusing a target by its own access list', () => {
  let site: TestServer;
  let http: HttpFetcher;

  beforeAll(async () => {
    site = await startTestServer({ '/': { body: staticArticle({ title: 'Quay' }) } });
    http = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
  });

  afterAll(async () => {
    await Promise.all([http?.close(), site?.close()]);
  });

  it('is the proxy failing (proxy_unavailable, for that target), not the site: CONNECT 403 and SOCKS5 "not allowed"', async () => {
    for (const protocol of ['http', 'socks5'] as const) {
      // Squid's default refuses CONNECT to any port but 443; the site itself never sees the request.
      const proxy = await startForwardProxy({ protocol, refuse: (_host, port) => port === site.port });
      try {
        const err = await failureOf(http.fetch({ url: site.url('/'), exit: { tier: 'datacenter', proxyUrl: proxy.url } }));
        expect(err.code, protocol).toBe('proxy_unavailable');
        // Only this target: another exit of the tier may carry it, and the proxy stays up for other sites.
        expect(exitFailureScope(err), protocol).toBe('target');
        expect(proxy.tunnels).toBe(0);
      } finally {
        await proxy.close();
      }
    }
  });

  it('is the proxy down once it refused several different sites and tunnelled none', async () => {
    const proxy = await startForwardProxy({ refuse: () => true });
    const fetcher = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
    try {
      const scopes: string[] = [];
      for (let i = 0; i < PROXY_STALL_TARGETS; i++) {
        const err = await failureOf(fetcher.fetch({ url: `http://127.0.0.${10 + i}:${site.port}/`, exit: { tier: 'datacenter', proxyUrl: proxy.url } }));
        expect(err.code).toBe('proxy_unavailable');
        scopes.push(exitFailureScope(err));
      }
      expect(scopes).toEqual([...Array.from({ length: PROXY_STALL_TARGETS - 1 }, () => 'target'), 'proxy']);
    } finally {
      await fetcher.close();
      await proxy.close();
    }
  });
});

describe('SOCKS5 exits and a dead site', () => {
  let site: TestServer;
  let http: HttpFetcher;

  beforeAll(async () => {
    site = await startTestServer({ '/': { body: staticArticle({ title: 'Pier' }) } });
    http = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
  });

  afterAll(async () => {
    await Promise.all([http?.close(), site?.close()]);
  });

  it('blames the site, not the SOCKS proxy, when the proxy answers "general failure" or closes for a dead site', async () => {
    const gone = await startTestServer({});
    const deadUrl = gone.url('/').replace('127.0.0.1', '127.0.0.42');
    await gone.close();
    for (const behaviour of ['general_failure', 'close'] as const) {
      const proxy = await startForwardProxy({
        protocol: 'socks5', auth: { user: 'gina', pass: 's0cks' }, ...(behaviour === 'close' ? { onUnreachable: 'close' as const } : { socksUnreachableReply: 1 }),
      });
      try {
        // The same rule as CONNECT proxies: a single dead site says nothing of the proxy.
        for (let i = 0; i < PROXY_STALL_TARGETS + 1; i++) {
          const err = await failureOf(http.fetch({ url: deadUrl, exit: { tier: 'residential', proxyUrl: proxy.authUrl } }));
          expect(err.code, behaviour).toBe('network_error');
          expect(err.message).not.toContain('s0cks');
        }
        const r = await http.fetch({ url: site.url('/'), exit: { tier: 'residential', proxyUrl: proxy.authUrl } });
        expect(r.status).toBe(200);
      } finally {
        await proxy.close();
      }
    }
  });

  it('blames the SOCKS proxy once it failed several different sites and tunnelled none', async () => {
    const proxy = await startForwardProxy({ protocol: 'socks5', socksUnreachableReply: 1 });
    const fetcher = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
    try {
      const codes: string[] = [];
      // Distinct loopback addresses are distinct sites; nothing listens on the port there.
      for (let i = 0; i < PROXY_STALL_TARGETS; i++) codes.push((await failureOf(fetcher.fetch({ url: `http://127.0.0.${20 + i}:${site.port}/`, exit: { tier: 'residential', proxyUrl: proxy.url } }))).code);
      expect(codes).toEqual([...Array.from({ length: PROXY_STALL_TARGETS - 1 }, () => 'network_error'), 'proxy_unavailable']);
    } finally {
      await fetcher.close();
      await proxy.close();
    }
  });
});

describe('what tells a proxy in trouble from a site down', () => {
  let site: TestServer;

  beforeAll(async () => {
    site = await startTestServer({ '/': { body: staticArticle({ title: 'Slipway' }) } });
  });

  afterAll(async () => {
    await site?.close();
  });

  it('counts one dead site once, whatever hostnames, schemes and ports its links name', async () => {
    const gone = await Promise.all([startTestServer({}), startTestServer({})]);
    const [deadPort, otherDeadPort] = gone.map((g) => g.port);
    await Promise.all(gone.map((g) => g.close()));
    const names = ['deadsite.test', 'www.deadsite.test', 'cdn.deadsite.test', 'img.deadsite.test'];
    const proxy = await startForwardProxy({ onUnreachable: 'close', hosts: Object.fromEntries(names.map((n) => [n, '127.0.0.1'])) });
    const fetcher = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
    try {
      const urls = [...names.map((n) => `http://${n}:${deadPort}/`), `https://deadsite.test:${otherDeadPort}/`, `https://www.deadsite.test:${deadPort}/`];
      for (const url of urls) {
        const err = await failureOf(fetcher.fetch({ url, exit: { tier: 'datacenter', proxyUrl: proxy.url } }));
        expect(err.code, url).toBe('network_error');
      }
      const r = await fetcher.fetch({ url: site.url('/'), exit: { tier: 'datacenter', proxyUrl: proxy.url } });
      expect(r.status).toBe(200);
    } finally {
      await fetcher.close();
      await proxy.close();
    }
  });

  it('does not count tunnels that opened and later closed as failed sites', async () => {
    const sites = await Promise.all([51, 52, 53].map((n) => startTestServer({ '/': { body: 'fine' } }, { host: `127.0.0.${n}` })));
    const gone = await startTestServer({});
    const deadUrl = gone.url('/').replace('127.0.0.1', '127.0.0.54');
    await gone.close();
    const proxy = await startForwardProxy({ onUnreachable: 'close' });
    const fetcher = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
    try {
      // Three tunnels open at once, then end normally: all after the proxy's last success.
      const pages = await Promise.all(sites.map((s) => fetcher.fetch({ url: s.url('/'), exit: { tier: 'datacenter', proxyUrl: proxy.url } })));
      expect(pages.map((p) => p.status)).toEqual([200, 200, 200]);
      await Promise.all(sites.map((s) => s.close()));
      await new Promise((r) => setTimeout(r, 100));
      const err = await failureOf(fetcher.fetch({ url: deadUrl, exit: { tier: 'datacenter', proxyUrl: proxy.url } }));
      expect(err.code, err.message).toBe('network_error');
    } finally {
      await fetcher.close();
      await proxy.close();
    }
  });

  it("blames a proxy that fails a site another proxy of its tier reaches (for that site), and forgets it once the site fails there too", async () => {
    const good = await startForwardProxy({ localAddress: '127.0.2.5' });
    // Takes every connection and closes every CONNECT: down for all sites, while only one site is crawled.
    const bad = net.createServer((c) => c.once('data', () => c.destroy()));
    await new Promise<void>((resolve) => bad.listen(0, '127.0.0.1', resolve));
    const badUrl = `http://127.0.0.1:${(bad.address() as AddressInfo).port}`;
    const lonely = await startTestServer({ '/': { body: staticArticle({ title: 'Only site' }) } });
    const fetcher = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
    try {
      expect((await fetcher.fetch({ url: lonely.url('/'), exit: { tier: 'datacenter', proxyUrl: good.url } })).status).toBe(200);
      const err = await failureOf(fetcher.fetch({ url: lonely.url('/'), exit: { tier: 'datacenter', proxyUrl: badUrl } }));
      expect(err.code, err.message).toBe('proxy_unavailable');
      expect(exitFailureScope(err)).toBe('target');
      // The site goes down: it fails through the proxy that reached it, so nothing more is concluded of the other one.
      const lonelyUrl = lonely.url('/');
      await lonely.close();
      expect((await failureOf(fetcher.fetch({ url: lonelyUrl, exit: { tier: 'datacenter', proxyUrl: good.url } }))).code).toBe('network_error');
      expect((await failureOf(fetcher.fetch({ url: lonelyUrl, exit: { tier: 'datacenter', proxyUrl: badUrl } }))).code).toBe('network_error');
    } finally {
      await fetcher.close();
      await good.close();
      bad.close();
    }
  });
});
