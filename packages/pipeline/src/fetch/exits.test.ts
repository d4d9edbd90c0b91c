import { describe, expect, it } from 'vitest';
import { DelayedError } from 'bullmq';
import { CrawlerError, ManualClock, openGate, parseProxyTiers, type PolitenessGate } from '@crawler/core';
import { FetchError, ProxyExitError, type FetchRequest } from '@crawler/fetchers';
import { createFetchProcessor, type FetchSettings } from './fetch-processor.js';
import { ExitPool } from '../exits/exit-pool.js';
import { SessionJars } from '../exits/session-jars.js';
import { STATIC_HTML, fakeJob, makeHarness, response } from '../__fixtures__/fakes.js';

const URL1 = 'http://u1:p1@res1.example:8000';
const URL2 = 'socks5://u2:p2@res2.example:1080';
const TIERS = parseProxyTiers(
  JSON.stringify([
    { name: 'datacenter', cost: 1, urls: ['http://u:p@dc.example:3128'] },
    { name: 'residential', cost: 10, urls: [URL1, URL2] },
  ]),
  { direct: true },
);
const settings: FetchSettings = {
  fetcherNames: ['simple_http', 'playwright', 'playwright_stealth'], maxAttempts: 6, pauseMaxMs: 24 * 3600_000, fetchTimeoutMs: 1000, fetchMaxBytes: 1 << 20,
  exitTiers: TIERS, proxyUnhealthyMs: 30_000,
};

/** A harness whose fetcher answers by exit: `answer(req)` decides, and every request's exit is recorded. */
function setup(answer: (req: FetchRequest, clock: ManualClock) => ReturnType<typeof response> | Error, tiers = TIERS, gate?: PolitenessGate) {
  const h = makeHarness();
  const exits: Array<string | null> = [];
  const cookies: Array<string | undefined> = [];
  const pool = new ExitPool(tiers, { unhealthyMs: 30_000, clock: h.clock as ManualClock });
  const jars = new SessionJars({ clock: h.clock });
  const fetchers = {
    get: (name: string) => ({
      name,
      close: async () => {},
      fetch: async (req: FetchRequest) => {
        exits.push(req.exit?.proxyUrl ?? null);
        cookies.push(req.headers?.cookie);
        const r = answer(req, h.clock as ManualClock);
        if (r instanceof Error) throw r;
        return { ...r, fetcher: name };
      },
    }),
  };
  const proc = createFetchProcessor({ ...h.common, ...(gate ? { gate } : {}), settings: { ...settings, exitTiers: tiers }, enqueueRoute: h.enqueueRoute, fetchers, probeStore: h.probeStore, outcomes: h.outcomes, exits: pool, jars });
  return { h, exits, cookies, pool, proc };
}

const job = (linkId: string, url: string, extra: Record<string, unknown> = {}) => fakeJob({ linkId, url, fetcher: 'simple_http', selectionSource: 'learned', ...extra }, 'fetch-simple_http');

describe('fetch processor with exit tiers', () => {
  it('climbs the exit ladder after a block: plain HTTP direct → plain HTTP through datacenter, the refused arm named', async () => {
    const { h, proc } = setup((req) => response(req.url, { status: 403, html: '<html><body>Forbidden</body></html>' }));
    const link = h.links.add('https://ranges.example/a', { status: 'fetching' });
    await proc(job(link.id, link.url));
    expect(h.attempts[0]).toMatchObject({ fetcher: 'simple_http', exitTier: 'direct', isBanned: true });
    expect(h.routeJobs[0]!.input).toMatchObject({ nextFetcher: 'simple_http@datacenter', blockedFetcher: 'simple_http' });
  });

  it('rotates to another exit of the tier when a site refuses one, and climbs once it refuses a second', async () => {
    const refused = new Set<string>();
    const { h, exits, pool, proc } = setup((req) => {
      refused.add(req.exit!.proxyUrl!);
      return response(req.url, { status: 403, html: '<html><body>Forbidden</body></html>' });
    });
    const first = h.links.add('https://pool.example/a', { status: 'fetching' });
    await proc(job(first.id, first.url, { exitTier: 'residential' }));
    expect(h.attempts[0]).toMatchObject({ exitTier: 'residential', isBanned: true });
    // One address of the pool banned: the same arm again, through the tier's other exit, and no arm refused.
    expect(h.routeJobs[0]!.input).toMatchObject({ nextFetcher: 'simple_http@residential' });
    expect(h.routeJobs[0]!.input).not.toHaveProperty('blockedFetcher');
    expect((await pool.pick('residential', new Set(), 'pool.example'))?.proxyUrl).not.toBe(exits[0]);
    // The tier's second exit refused too: its range is, and the link climbs the ladder.
    const second = h.links.add('https://pool.example/b', { status: 'fetching' });
    await proc(job(second.id, second.url, { exitTier: 'residential' }));
    expect(refused).toEqual(new Set([URL1, URL2]));
    expect(h.routeJobs[1]!.input).toMatchObject({ nextFetcher: 'playwright_stealth', blockedFetcher: 'simple_http@residential' });
  });

  it("names the proxy a reused probe left through on the attempt, and retires it for the site when the page is a block", async () => {
    const { h, exits, pool, proc } = setup((req) => response(req.url, { html: STATIC_HTML }));
    const ok = h.links.add('https://probed.example/a', { status: 'fetching' });
    await h.probeStore.save(ok.id, { status: 200, headers: {}, finalUrl: ok.url, contentType: 'text/html', body: new TextEncoder().encode(STATIC_HTML), text: STATIC_HTML, exit: { tier: 'residential', id: pool.idOf(URL1) } });
    await proc(job(ok.id, ok.url, { exitTier: 'residential', probe: { key: `probe:${ok.id}`, status: 200, bodyBytes: STATIC_HTML.length } }));
    expect(exits).toEqual([]);
    expect(h.attempts[0]).toMatchObject({ exitTier: 'residential', exitProxy: 'http://***@res1.example:8000', errorType: null });
    const blocked = h.links.add('https://probed.example/b', { status: 'fetching' });
    const wall = '<html><body>Forbidden</body></html>';
    await h.probeStore.save(blocked.id, { status: 403, headers: {}, finalUrl: blocked.url, contentType: 'text/html', body: new TextEncoder().encode(wall), text: wall, exit: { tier: 'residential', id: pool.idOf(URL1) } });
    await proc(job(blocked.id, blocked.url, { exitTier: 'residential', probe: { key: `probe:${blocked.id}`, status: 403, bodyBytes: wall.length } }));
    expect(h.attempts[1]).toMatchObject({ exitTier: 'residential', exitProxy: 'http://***@res1.example:8000', isBanned: true });
    // Retired for the site: the tier's other proxy leaves for it next.
    expect((await pool.pick('residential', new Set(), 'probed.example'))?.proxyUrl).toBe(URL2);
    expect((await pool.pick('residential', new Set(), 'probed.example'))?.proxyUrl).toBe(URL2);
  });

  it('climbs at once when the tier has no other exit for the site', async () => {
    const { h, proc } = setup((req) => response(req.url, { status: 403, html: '<html><body>Forbidden</body></html>' }));
    const link = h.links.add('https://single.example/a', { status: 'fetching' });
    await proc(job(link.id, link.url, { exitTier: 'datacenter' }));
    expect(h.routeJobs[0]!.input).toMatchObject({ nextFetcher: 'simple_http@residential', blockedFetcher: 'simple_http@datacenter' });
  });

  it('resumes a rate-limited arm on the same arm: a 429 is pace, not a wrong exit', async () => {
    const { h, proc } = setup((req) => response(req.url, { status: 429, headers: { 'retry-after': '60', 'content-type': 'text/plain' }, contentType: 'text/plain', text: 'slow down' }));
    const link = h.links.add('https://ranges.example/b', { status: 'fetching' });
    await proc(job(link.id, link.url, { exitTier: 'residential' }));
    expect(h.attempts[0]).toMatchObject({ exitTier: 'residential', errorType: 'rate_limited' });
    expect(h.routeJobs[0]!.input).toMatchObject({ nextFetcher: 'simple_http@residential' });
    expect(h.routeJobs[0]!.input).not.toHaveProperty('blockedFetcher');
  });

  it('retires the session a site blocked, for that site: its next request leaves as the tier\'s other identity', async () => {
    let blocks = 1;
    const { h, exits, pool, proc } = setup((req) => (blocks-- > 0 ? response(req.url, { status: 403, html: '<html><body>Forbidden</body></html>' }) : response(req.url, { html: STATIC_HTML })));
    const link = h.links.add('https://ranges.example/s', { status: 'fetching' });
    await proc(job(link.id, link.url, { exitTier: 'residential' }));
    expect(exits).toEqual([URL1]);
    for (let i = 0; i < 3; i++) expect((await pool.pick('residential', new Set(), 'ranges.example'))?.proxyUrl).toBe(URL2);
    const other = new Set([(await pool.pick('residential', new Set(), 'other.example'))?.proxyUrl, (await pool.pick('residential', new Set(), 'other.example'))?.proxyUrl]);
    expect(other).toEqual(new Set([URL1, URL2]));
  });

  it('keeps a cookie jar per session and site: sent back through the session that got it, dropped when it is retired', async () => {
    let n = 0;
    const { h, exits, cookies, proc } = setup((req) =>
      n++ === 3 ? response(req.url, { status: 403, html: '<html><body>Forbidden</body></html>' }) : response(req.url, { html: STATIC_HTML, headers: { 'content-type': 'text/html', 'set-cookie': `sid=${n}; Path=/` } }),
    );
    for (const path of ['a', 'b', 'c', 'd', 'e']) {
      const link = h.links.add(`https://jar.example/${path}`, { status: 'fetching' });
      await proc(job(link.id, link.url, { exitTier: 'residential' }));
    }
    // Round robin over the two sessions: each sends back only what it was given; the 4th request (URL2) is blocked,
    // its session retired for the site with its jar, so the 5th leaves through URL1 with URL1's cookie.
    expect(exits).toEqual([URL1, URL2, URL1, URL2, URL1]);
    expect(cookies).toEqual([undefined, undefined, 'sid=1', 'sid=2', 'sid=3']);
    const other = h.links.add('https://other.example/a', { status: 'fetching' });
    await proc(job(other.id, other.url, { exitTier: 'residential' }));
    expect(cookies.at(-1)).toBeUndefined();
  });

  it("keeps a session's Secure cookies off its http:// requests of the site", async () => {
    const { h, exits, cookies, proc } = setup((req) =>
      response(req.url, { html: STATIC_HTML, headers: { 'content-type': 'text/html', 'set-cookie': 'sid=s3cret; Path=/; Secure\nlang=en; Path=/' } }),
    );
    for (const url of ['https://mixed.example/a', 'https://mixed.example/b', 'http://mixed.example/c', 'http://mixed.example/d']) {
      const link = h.links.add(url, { status: 'fetching' });
      await proc(job(link.id, link.url, { exitTier: 'residential' }));
    }
    expect(exits).toEqual([URL1, URL2, URL1, URL2]);
    // An https answer's Secure cookie goes back over https only; over http:// (in clear, through the proxy) the rest.
    expect(cookies).toEqual([undefined, undefined, 'lang=en', 'lang=en']);
    const again = h.links.add('https://mixed.example/e', { status: 'fetching' });
    await proc(job(again.id, again.url, { exitTier: 'residential' }));
    expect(cookies.at(-1)).toBe('sid=s3cret; lang=en');
  });

  it('switches a page that needs a browser to the browser on the same exit', async () => {
    const { h, proc } = setup((req) => response(req.url, { html: '<html><head><script src="/app.js"></script></head><body><div id="root"></div></body></html>' }));
    const link = h.links.add('https://app.example/x', { status: 'fetching' });
    const out = await proc(job(link.id, link.url, { exitTier: 'datacenter' }));
    expect(out).toMatchObject({ outcome: 'switched' });
    expect(h.fetchJobs[0]).toMatchObject({ fetcher: 'playwright', exitTier: 'datacenter', selectionSource: 'retry' });
  });

  it("fails over to the tier's next proxy when one is down, logs no attempt for it, and leaves it out afterwards", async () => {
    const { h, exits, pool, proc } = setup((req) => (req.exit?.proxyUrl === URL1 ? new CrawlerError('proxy_unavailable', 'proxy http://***@res1.example:8000 unavailable: ECONNREFUSED') : response(req.url, { html: STATIC_HTML })));
    const link = h.links.add('https://ranges.example/c', { status: 'fetching' });
    const out = await proc(job(link.id, link.url, { exitTier: 'residential' }));
    expect(out).toMatchObject({ outcome: 'done', attempts: 1 });
    expect(exits).toEqual([URL1, URL2]);
    expect(h.attempts.map((a) => [a.exitTier, a.success, a.errorType])).toEqual([['residential', true, null]]);
    expect(await pool.pick('residential')).toEqual({ tier: 'residential', proxyUrl: URL2 });
    expect(await pool.pick('residential')).toEqual({ tier: 'residential', proxyUrl: URL2 });
    // The verdict ends with PROXY_UNHEALTHY_MS.
    (h.clock as ManualClock).advance(30_001);
    const both = new Set([(await pool.pick('residential'))?.proxyUrl, (await pool.pick('residential'))?.proxyUrl]);
    expect(both).toEqual(new Set([URL1, URL2]));
  });

  it("takes a proxy's refusal of one site (its access list) as that proxy's, for that site only: no attempt, no risk, the tier's next proxy carries it", async () => {
    const refusal = () => {
      const cause = new ProxyExitError('proxy http://***@res1.example:8000 refused refusing.example:443: CONNECT answered 403', 'http://***@res1.example:8000', '403', 'target');
      return new FetchError('proxy_unavailable', cause.message, { cause });
    };
    const { h, exits, pool, proc } = setup((req) => (req.exit?.proxyUrl === URL1 && req.url.includes('refusing.example') ? refusal() : response(req.url, { html: STATIC_HTML })));
    const link = h.links.add('https://refusing.example/a', { status: 'fetching' });
    const out = await proc(job(link.id, link.url, { exitTier: 'residential' }));
    expect(out).toMatchObject({ outcome: 'done', attempts: 1 });
    expect(exits).toEqual([URL1, URL2]);
    expect(h.attempts.map((a) => [a.exitTier, a.success, a.errorType])).toEqual([['residential', true, null]]);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'done', riskLevel: 0 });
    // Left out for the site that it refuses; still up for every other site.
    for (let i = 0; i < 3; i++) expect((await pool.pick('residential', new Set(), 'refusing.example'))?.proxyUrl).toBe(URL2);
    const other = new Set([(await pool.pick('residential', new Set(), 'other.example'))?.proxyUrl, (await pool.pick('residential', new Set(), 'other.example'))?.proxyUrl]);
    expect(other).toEqual(new Set([URL1, URL2]));
  });

  it('tries each sticky-session gateway of a tier once per request, even when a proxy takes longer to fail than PROXY_UNHEALTHY_MS', async () => {
    const sticky = parseProxyTiers(JSON.stringify([{ name: 'sticky', cost: 5, urls: ['http://c-{session}:p@gw1.example:7000', 'http://c-{session}:p@gw2.example:7000'] }]), { direct: true });
    let calls = 0;
    const { h, exits, proc } = setup((_req, clock) => {
      // A silent proxy fails after the connect timeout, here longer than the verdict lasts.
      clock.advance(31_000);
      if (++calls > 10) throw new Error('the job kept trying the same gateways');
      return new CrawlerError('proxy_unavailable', 'proxy http://***@gw.example:7000 unavailable: ETIMEDOUT');
    }, sticky);
    const link = h.links.add('https://sticky.example/a', { status: 'fetching' });
    await expect(proc(job(link.id, link.url, { exitTier: 'sticky' }))).rejects.toBeInstanceOf(DelayedError);
    expect(exits.map((u) => new URL(u!).host)).toEqual(['gw1.example:7000', 'gw2.example:7000']);
  });

  it('fails the link with proxy_unavailable, saying what the proxies said, when no proxy of its tier comes back', async () => {
    const { h, proc } = setup(() => new CrawlerError('proxy_unavailable', 'proxy http://***@res.example:8000 unavailable: ECONNREFUSED'));
    const link = h.links.add('https://ranges.example/gone', { status: 'fetching' });
    const j = fakeJob({ linkId: link.id, url: link.url, fetcher: 'simple_http', selectionSource: 'learned', exitTier: 'residential' }, 'fetch-simple_http');
    j.updateData = async (data) => void (j.data = data);
    let out: Awaited<ReturnType<typeof proc>> | undefined;
    let runs = 0;
    while (!out && runs < 20) {
      runs++;
      try {
        out = await proc(j);
      } catch (err) {
        expect(err).toBeInstanceOf(DelayedError);
        // While it waits, the link says why.
        expect(h.links.rows.get(link.id)).toMatchObject({ status: 'fetching', lastErrorType: 'proxy_unavailable' });
        // The proxies' verdicts run out before the job's next run.
        (h.clock as ManualClock).advance(3_600_000);
      }
    }
    expect(runs).toBe(settings.maxAttempts);
    expect(out).toMatchObject({ outcome: 'failed', errorType: 'proxy_unavailable' });
    const row = h.links.rows.get(link.id)!;
    expect(row).toMatchObject({ status: 'failed', lastErrorType: 'proxy_unavailable', attemptCount: 0 });
    expect(row.lastError).toMatch(/every proxy of exit tier 'residential' failed \(proxy http:\/\/\*\*\*@res\.example:8000 unavailable: ECONNREFUSED; proxy http:\/\/\*\*\*@res\.example:8000 unavailable: ECONNREFUSED\); tried 6 times in a row/);
    expect(h.attempts).toEqual([]);
  });

  it('counts only waits in a row: a request that left through the tier between two waits starts the count again', async () => {
    // The tier is down for MAX_ATTEMPTS - 1 runs, then up: the request meets a network error and its retry a politeness
    // wait (the same job runs again). Before, the job's count of waits went on from there, and the tier's next blip
    // failed the link "after 6 waits in a row" when it had waited once since a proxy carried its request.
    let mode: 'down' | 'flaky' = 'down';
    let denyNext = false;
    const gate: PolitenessGate = {
      ...openGate,
      acquire: async (domain) => {
        if (!denyNext) return openGate.acquire(domain);
        denyNext = false;
        return { granted: false as const, retryInMs: 1_000, reason: 'delay' as const };
      },
    };
    const { h, exits, proc } = setup(() => {
      if (mode === 'down') return new CrawlerError('proxy_unavailable', 'proxy http://***@res.example:8000 unavailable: ECONNREFUSED');
      denyNext = true;
      return new FetchError('network_error', 'UND_ERR_SOCKET: other side closed');
    }, TIERS, gate);
    const link = h.links.add('https://flaky.example/a', { status: 'fetching' });
    const j = fakeJob({ linkId: link.id, url: link.url, fetcher: 'simple_http', selectionSource: 'learned', exitTier: 'residential' }, 'fetch-simple_http');
    j.updateData = async (data) => void (j.data = data);
    const run = async () => {
      try {
        return await proc(j);
      } catch (err) {
        expect(err).toBeInstanceOf(DelayedError);
        (h.clock as ManualClock).advance(3_600_000);
        return 'delayed';
      }
    };
    for (let i = 1; i < settings.maxAttempts; i++) expect(await run()).toBe('delayed');
    mode = 'flaky';
    expect(await run()).toBe('delayed');
    expect(h.attempts.map((a) => a.errorType)).toEqual(['network_error']);
    const sent = exits.length;
    mode = 'down';
    expect(await run()).toBe('delayed');
    expect(exits.length).toBeGreaterThan(sent);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'fetching', lastErrorType: 'proxy_unavailable' });
    expect(h.links.rows.get(link.id)!.lastError).toMatch(/tried 1 time in a row/);
    expect(j.data).toMatchObject({ exitWaits: 1 });
  });

  it("says what each proxy of the tier said when none could carry the request, not only the last one's", async () => {
    // Before, a wrong password on one proxy (407) and another proxy refusing connections showed only the last
    // failure (ECONNREFUSED): the 407 a user has to fix was in no log line and not on the link.
    const { h, proc } = setup((req) =>
      new CrawlerError('proxy_unavailable', req.exit?.proxyUrl === URL1 ? 'proxy http://***@res1.example:8000 unavailable: authentication required (407)' : 'proxy socks5://***@res2.example:1080 unavailable: ECONNREFUSED'),
    );
    const link = h.links.add('https://ranges.example/both', { status: 'fetching' });
    await expect(proc(job(link.id, link.url, { exitTier: 'residential' }))).rejects.toBeInstanceOf(DelayedError);
    const lastError = h.links.rows.get(link.id)!.lastError!;
    expect(lastError).toContain('http://***@res1.example:8000 unavailable: authentication required (407)');
    expect(lastError).toContain('socks5://***@res2.example:1080 unavailable: ECONNREFUSED');
    expect(lastError).not.toMatch(/p1|p2/);
  });

  it('waits, without an attempt, when every proxy of the tier is down', async () => {
    const { h, exits, proc } = setup(() => new CrawlerError('proxy_unavailable', 'proxy unavailable: 407'));
    const link = h.links.add('https://ranges.example/d', { status: 'fetching' });
    await expect(proc(job(link.id, link.url, { exitTier: 'residential' }))).rejects.toBeInstanceOf(DelayedError);
    expect(exits).toEqual([URL1, URL2]);
    expect(h.attempts).toEqual([]);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'fetching', attemptCount: 0 });
  });
});
