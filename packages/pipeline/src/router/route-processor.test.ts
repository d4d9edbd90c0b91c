import { CrawlerError } from '@crawler/core';
import { describe, expect, it } from 'vitest';
import { DelayedError } from 'bullmq';
import { InvalidJobPayloadError } from '@crawler/queue';
import { DAY_MS, type DomainAttempt, type Heuristic } from '@crawler/core';
import { createRouteProcessor, withChange, type DomainStateReader, type RouterSettings } from './route-processor.js';
import type { LearnedSelector } from '../ports.js';
import type { ArmBlock } from '../fetch/blocked-arms.js';
import { STATIC_HTML, SPA_HTML, fakeJob, makeHarness, response } from '../__fixtures__/fakes.js';

const settings: RouterSettings = { learningModeEnabled: true, fetcherNames: ['simple_http', 'playwright', 'playwright_stealth'], confidenceThreshold: 0.6, minSampleSize: 5 };
const score = (fetcher: string, confidence: number) => ({ fetcher, sampleSize: 10, decayedSuccesses: confidence * 10, successRate: confidence, sampleFactor: 1, confidence, eligible: true });

function router(h: ReturnType<typeof makeHarness>, probe: (url: string) => Promise<ReturnType<typeof response>>, over: Partial<RouterSettings> = {}, domainState?: DomainStateReader, learning?: LearnedSelector) {
  let probes = 0;
  const process = createRouteProcessor({
    ...h.common,
    settings: { ...settings, ...over },
    learning: learning ?? h.learning,
    domainState,
    routes: h.routes,
    probeStore: h.probeStore,
    probe: async (url) => {
      probes += 1;
      return probe(url);
    },
  });
  return { process, probes: () => probes };
}

describe('route processor, learning mode', () => {
  it('uses a confident learned fetcher without probing', async () => {
    const h = makeHarness({ best: { best: score('playwright', 0.9), scores: [score('playwright', 0.9)] } });
    const link = h.links.add('https://wiki.example/a');
    const r = router(h, async () => {
      throw new Error('must not probe');
    });
    const out = await r.process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ kind: 'routed', fetcher: 'playwright', source: 'learned', probeReused: false });
    expect(r.probes()).toBe(0);
    expect(h.fetchJobs[0]).toMatchObject({ linkId: link.id, fetcher: 'playwright', selectionSource: 'learned', confidence: 0.9 });
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'fetching', fetcher: 'playwright', selectionSource: 'learned' });
  });

  it('reuses a confident decision for URLs with the same routing heuristics while the cache lasts, but never a probe', async () => {
    let calls = 0;
    let best = score('playwright', 0.4);
    const learning: LearnedSelector = {
      findBestFetcher: async () => {
        calls += 1;
        return { best, scores: [best] };
      },
    };
    const h = makeHarness();
    const r = router(h, async (url) => response(url, { html: STATIC_HTML }), { decisionCacheMs: 60_000 }, undefined, learning);
    const route = async (url: string) => r.process(fakeJob({ linkId: h.links.add(url).id, url }));
    // Not confident: every link asks the store again (and probes), so a new site is learned as fast as without a cache.
    expect(await route('https://news.example/a/1.html')).toMatchObject({ source: 'probe' });
    expect(await route('https://news.example/a/2.html')).toMatchObject({ source: 'probe' });
    expect(calls).toBe(2);
    best = score('playwright', 0.9);
    expect(await route('https://news.example/a/3.html')).toMatchObject({ fetcher: 'playwright', source: 'learned', confidence: 0.9 });
    expect(calls).toBe(3);
    // Same domain, suffix and depth: the decision is reused without a read.
    expect(await route('https://news.example/a/4.html')).toMatchObject({ fetcher: 'playwright', source: 'learned', confidence: 0.9 });
    expect(calls).toBe(3);
    // Other routing heuristics (another domain): asked afresh.
    expect(await route('https://other.example/a/4.html')).toMatchObject({ source: 'learned' });
    expect(calls).toBe(4);
    expect(r.probes()).toBe(2);
  });

  it('keeps one store read per domain for a site of one-page sections, and reads a section with pages of its own apart', async () => {
    const asked: (string | undefined)[] = [];
    const confident = { best: score('playwright', 0.9), scores: [score('playwright', 0.9)] };
    const learning: LearnedSelector = {
      findBestFetcher: async (hs, opts) => {
        asked.push(opts.alone?.value);
        expect(hs.map((h) => h.type)).not.toContain('section');
        // The blog has a static record of its own; slugs have none.
        const alone = opts.alone?.value === 'news.example/blog' ? { attempts: 12, result: { best: score('simple_http', 0.9), scores: [score('simple_http', 0.9)] } } : { attempts: 0, result: { best: null, scores: [] } };
        return { ...confident, alone };
      },
    };
    const h = makeHarness();
    const r = router(h, async () => {
      throw new Error('must not probe');
    }, { decisionCacheMs: 60_000 }, undefined, learning);
    const route = async (url: string) => r.process(fakeJob({ linkId: h.links.add(url).id, url }));
    // A thousand article slugs, one page each: as before sections, the domain's decision is read once and shared.
    for (let i = 0; i < 1_000; i++) expect(await route(`https://news.example/story-${i}`)).toMatchObject({ fetcher: 'playwright', source: 'learned' });
    expect(asked).toEqual(['news.example/story-0']);
    // The blog's first pages share it too, until it may have a sample of its own (minSampleSize pages routed here)...
    for (let i = 0; i < 5; i++) expect(await route(`https://news.example/blog/${i}`)).toMatchObject({ fetcher: 'playwright' });
    expect(asked).toHaveLength(1);
    // ...then it is read, judged on its own, and its decision cached for it alone: one read for its next pages.
    for (let i = 5; i < 20; i++) expect(await route(`https://news.example/blog/${i}`)).toMatchObject({ fetcher: 'simple_http', source: 'learned' });
    expect(asked).toEqual(['news.example/story-0', 'news.example/blog']);
    // And the slugs keep the domain's.
    expect(await route('https://news.example/story-x')).toMatchObject({ fetcher: 'playwright' });
    expect(asked).toHaveLength(2);
  });

  it('asks the store for every link when the decision cache is off (the default)', async () => {
    let calls = 0;
    const learning: LearnedSelector = {
      findBestFetcher: async () => {
        calls += 1;
        return { best: score('simple_http', 0.9), scores: [] };
      },
    };
    const h = makeHarness();
    const r = router(h, async () => {
      throw new Error('must not probe');
    }, {}, undefined, learning);
    for (const url of ['https://news.example/a/1.html', 'https://news.example/a/2.html']) await r.process(fakeJob({ linkId: h.links.add(url).id, url }));
    expect(calls).toBe(2);
  });

  it('probes when the learned confidence is not above the threshold, and keeps a static body for reuse', async () => {
    const h = makeHarness({ best: { best: score('playwright', 0.6), scores: [] } });
    const link = h.links.add('https://static.example/a');
    const r = router(h, async (url) => response(url, { html: STATIC_HTML }));
    const out = await r.process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ kind: 'routed', fetcher: 'simple_http', source: 'probe', probeReused: true });
    expect(r.probes()).toBe(1);
    expect(h.fetchJobs[0]?.probe?.key).toBe(`probe:${link.id}`);
    expect(h.probes.get(`probe:${link.id}`)?.status).toBe(200);
  });

  it('keeps the exit a probe left through with its body, so the fetch reusing it names that proxy', async () => {
    const h = makeHarness({ best: { best: score('playwright', 0.6), scores: [] } });
    const link = h.links.add('https://static.example/b');
    const r = router(h, async (url) => Object.assign(response(url, { html: STATIC_HTML }), { exit: { tier: 'direct', id: '0123abcd' } }));
    await r.process(fakeJob({ linkId: link.id, url: link.url }));
    expect(h.probes.get(`probe:${link.id}`)?.exit).toEqual({ tier: 'direct', id: '0123abcd' });
  });

  it("keeps the charset a probe decoded its page with, and the encoding a browser read it in, with its body", async () => {
    const h = makeHarness({ best: { best: score('playwright', 0.6), scores: [] } });
    const plain = h.links.add('https://static.example/c');
    const rendered = h.links.add('https://static.example/d');
    const r = router(h, async (url) => response(url, url === plain.url ? { html: STATIC_HTML, charset: 'windows-1251' } : { html: STATIC_HTML, documentCharset: 'shift_jis' }));
    for (const link of [plain, rendered]) await r.process(fakeJob({ linkId: link.id, url: link.url }));
    expect(h.probes.get(`probe:${plain.id}`)).toMatchObject({ charset: 'windows-1251' });
    expect(h.probes.get(`probe:${rendered.id}`)).toMatchObject({ documentCharset: 'shift_jis' });
  });

  it('sends a revisit of a page plain HTTP stored with a validator to plain HTTP without a probe: the conditional request is the probe', async () => {
    const h = makeHarness({ best: { best: score('playwright', 0.5), scores: [] } });
    const stored = new Map<string, { fetcher: string; etag: string | null; lastModified: string | null }>();
    const reads: string[] = [];
    let probes = 0;
    const process = createRouteProcessor({
      ...h.common, settings, learning: h.learning, routes: h.routes, probeStore: h.probeStore,
      probe: async (url) => {
        probes += 1;
        return response(url, { html: STATIC_HTML });
      },
      revisits: {
        validators: async (linkId) => {
          reads.push(linkId);
          const v = stored.get(linkId);
          return v ? { contentId: 1n, version: 1, sha256: 'x', ...v } : null;
        },
      },
    });
    const visited = { lastAttemptAt: new Date(0), attemptCount: 0 };
    const etag = h.links.add('https://rv.example/etag', visited);
    stored.set(etag.id, { fetcher: 'simple_http', etag: '"1"', lastModified: null });
    const modified = h.links.add('https://rv.example/modified', visited);
    stored.set(modified.id, { fetcher: 'direct_access', etag: null, lastModified: 'Wed, 01 Apr 2026 00:00:00 GMT' });
    const rendered = h.links.add('https://rv.example/rendered', visited);
    stored.set(rendered.id, { fetcher: 'playwright', etag: '"2"', lastModified: null });
    const bare = h.links.add('https://rv.example/bare', visited);
    stored.set(bare.id, { fetcher: 'simple_http', etag: null, lastModified: null });
    const fresh = h.links.add('https://rv.example/fresh');
    const route = (l: { id: string; url: string }) => process(fakeJob({ linkId: l.id, url: l.url }));

    expect(await route(etag)).toMatchObject({ kind: 'routed', fetcher: 'simple_http', source: 'revisit', probeReused: false });
    expect(await route(modified)).toMatchObject({ kind: 'routed', fetcher: 'simple_http', source: 'revisit' });
    expect(probes).toBe(0);
    // A rendered version's validators do not describe the page plain HTTP gets; no validator, nothing to ask with.
    expect(await route(rendered)).toMatchObject({ source: 'probe' });
    expect(await route(bare)).toMatchObject({ source: 'probe' });
    expect(probes).toBe(2);
    // A first visit has no stored page: nothing is read for it.
    expect(await route(fresh)).toMatchObject({ source: 'probe' });
    expect(reads).toEqual([etag.id, modified.id, rendered.id, bare.id]);
  });

  it('does not revisit with plain HTTP when the learned store is confident in a browser or plain HTTP was just blocked', async () => {
    const h = makeHarness({ best: { best: score('playwright', 0.9), scores: [] } });
    const process = createRouteProcessor({
      ...h.common, settings, learning: h.learning, routes: h.routes, probeStore: h.probeStore,
      probe: async (url) => response(url, { html: STATIC_HTML }),
      revisits: { validators: async () => ({ contentId: 1n, version: 1, sha256: 'x', fetcher: 'simple_http', etag: '"1"', lastModified: null }) },
    });
    const link = h.links.add('https://rv2.example/a', { lastAttemptAt: new Date(0) });
    expect(await process(fakeJob({ linkId: link.id, url: link.url }))).toMatchObject({ fetcher: 'playwright', source: 'learned' });
    const h2 = makeHarness({ best: { best: score('simple_http', 0.5), scores: [] } });
    const process2 = createRouteProcessor({
      ...h2.common, settings, learning: h2.learning, routes: h2.routes, probeStore: h2.probeStore,
      probe: async (url) => response(url, { html: STATIC_HTML }),
      revisits: { validators: async () => ({ contentId: 1n, version: 1, sha256: 'x', fetcher: 'simple_http', etag: '"1"', lastModified: null }) },
    });
    const blocked = h2.links.add('https://rv3.example/a', { lastAttemptAt: new Date(0) });
    expect(await process2(fakeJob({ linkId: blocked.id, url: blocked.url, blockedFetcher: 'simple_http' }))).not.toMatchObject({ source: 'revisit' });
  });

  it('sends an SPA shell to the browser without keeping the probe body', async () => {
    const h = makeHarness();
    const link = h.links.add('https://spa.example/');
    const r = router(h, async (url) => response(url, { html: SPA_HTML }));
    const out = await r.process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ fetcher: 'playwright', source: 'probe', probeReused: false });
    expect(h.probes.size).toBe(0);
  });

  it('does not probe a domain again while a probe of it met a bot wall: its pages go to the probe\'s tool', async () => {
    const h = makeHarness();
    const [a, b, c] = ['a', 'b', 'c'].map((p) => h.links.add(`https://walled.example/${p}`));
    const wall = async (url: string) => response(url, { status: 403, html: '<html><body>Forbidden</body></html>' });
    const r = router(h, wall, { probeWallMemoryMs: 600_000 });
    expect(await r.process(fakeJob({ linkId: a!.id, url: a!.url }))).toMatchObject({ fetcher: 'playwright_stealth', source: 'probe' });
    // One refused probe is all the site sees: the next pages skip the probe and take the tool it chose.
    expect(await r.process(fakeJob({ linkId: b!.id, url: b!.url }))).toMatchObject({ fetcher: 'playwright_stealth', source: 'domain_memory' });
    expect(r.probes()).toBe(1);
    // Never the tool a link was just blocked with: that link is probed.
    expect(await r.process(fakeJob({ linkId: c!.id, url: c!.url, blockedFetcher: 'playwright_stealth' }))).toMatchObject({ source: 'probe' });
    expect(r.probes()).toBe(2);
    // An SPA shell is a page's own trait, not a wall: the domain's next page is probed as before.
    const s1 = h.links.add('https://app.example/1');
    const s2 = h.links.add('https://app.example/2');
    const spa = router(h, async (url) => response(url, { html: SPA_HTML }), { probeWallMemoryMs: 600_000 });
    await spa.process(fakeJob({ linkId: s1.id, url: s1.url }));
    await spa.process(fakeJob({ linkId: s2.id, url: s2.url }));
    expect(spa.probes()).toBe(2);
    // Off (0): every page is probed.
    const d = h.links.add('https://walled2.example/d');
    const e = h.links.add('https://walled2.example/e');
    const off = router(h, wall, { probeWallMemoryMs: 0 });
    await off.process(fakeJob({ linkId: d.id, url: d.url }));
    await off.process(fakeJob({ linkId: e.id, url: e.url }));
    expect(off.probes()).toBe(2);
  });

  it('reads the wall memory again once granted the probe permit: a probe that held it may have met the wall meanwhile', async () => {
    const h = makeHarness();
    const [a, b] = ['a', 'b'].map((p) => h.links.add(`https://raced.example/${p}`));
    // One permit per domain: the second probe waits for the first to let go (which it does after recording the wall).
    let held: Promise<void> = Promise.resolve();
    const gate = {
      ...h.common.gate,
      acquire: async () => {
        const before = held;
        let release!: () => void;
        held = new Promise<void>((r) => (release = r));
        await before;
        return { granted: true as const, permit: { release: async () => release() } };
      },
    };
    let answer!: () => void;
    const answered = new Promise<void>((r) => (answer = r));
    let probes = 0;
    const process = createRouteProcessor({
      ...h.common, gate, settings: { ...settings, probeWallMemoryMs: 600_000 }, learning: h.learning, routes: h.routes, probeStore: h.probeStore,
      probe: async (url) => {
        probes += 1;
        await answered;
        return response(url, { status: 403, html: '<html><body>Forbidden</body></html>' });
      },
    });
    const first = process(fakeJob({ linkId: a!.id, url: a!.url }));
    // b reads the wall memory (nothing yet) and waits for the permit while a's probe is out.
    const second = process(fakeJob({ linkId: b!.id, url: b!.url }));
    await new Promise((r) => setTimeout(r, 20));
    answer();
    expect(await first).toMatchObject({ fetcher: 'playwright_stealth', source: 'probe' });
    expect(await second).toMatchObject({ fetcher: 'playwright_stealth', source: 'domain_memory' });
    expect(probes).toBe(1);
  });

  it('follows a refusal of the wall memory\'s arm recorded since (blocked-arms): the next links skip the refused rung', async () => {
    const h = makeHarness();
    const [a, b] = ['a', 'b'].map((p) => h.links.add(`https://ladder.example/${p}`));
    const refused = new Map<string, ArmBlock>();
    const process = createRouteProcessor({
      ...h.common, settings: { ...settings, probeWallMemoryMs: 600_000 }, learning: h.learning, routes: h.routes, probeStore: h.probeStore,
      probe: async (url) => response(url, { status: 403, html: '<html><body>Forbidden</body></html>' }),
      blockedArms: { latest: async (d, arm) => refused.get(`${d} ${arm}`) ?? null },
    });
    expect(await process(fakeJob({ linkId: a!.id, url: a!.url }))).toMatchObject({ fetcher: 'playwright_stealth', source: 'probe' });
    // A fetch worker found the probe's choice refused too, and climbed to another tool.
    refused.set('ladder.example playwright_stealth', { atMs: Date.now() + 1, errorType: 'blocked_403', reason: 'blocked_403', nextFetcher: 'playwright', blockedFetcher: 'playwright_stealth' });
    expect(await process(fakeJob({ linkId: b!.id, url: b!.url }))).toMatchObject({ fetcher: 'playwright', source: 'domain_memory' });
  });

  it('falls back to plain HTTP without reuse when the probe fails', async () => {
    const h = makeHarness();
    const link = h.links.add('https://down.example/');
    const r = router(h, async () => {
      throw new Error('ECONNRESET');
    });
    const out = await r.process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ fetcher: 'simple_http', source: 'probe', probeReused: false });
    expect(h.attempts).toHaveLength(0);
  });

  it('fails a link whose address the SSRF guard refuses instead of probing it', async () => {
    const h = makeHarness();
    const link = h.links.add('http://10.0.0.5/');
    let probed = 0;
    const process = createRouteProcessor({
      ...h.common,
      robots: { check: async () => Promise.reject(new CrawlerError('blocked_address', '10.0.0.5 is a private address')) },
      settings,
      learning: h.learning,
      routes: h.routes,
      probeStore: h.probeStore,
      probe: async () => {
        probed += 1;
        throw new Error('must not probe');
      },
    });
    const out = await process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ kind: 'failed', errorType: 'blocked_address' });
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'failed', lastErrorType: 'blocked_address' });
    expect(probed).toBe(0);
  });

  it('routes without a probe when robots.txt cannot be asked through any proxy (PROXY_DIRECT=false): the fetch job waits for the exits', async () => {
    const h = makeHarness();
    const link = h.links.add('https://behind-proxies.example/a');
    let probed = 0;
    const process = createRouteProcessor({
      ...h.common,
      robots: { check: async () => Promise.reject(new CrawlerError('proxy_unavailable', "every proxy of tier 'residential' is down")) },
      settings,
      learning: h.learning,
      routes: h.routes,
      probeStore: h.probeStore,
      probe: async () => {
        probed += 1;
        throw new Error('must not probe');
      },
    });
    const out = await process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ kind: 'routed', fetcher: 'simple_http' });
    expect(probed).toBe(0);
    // The fetch job asks robots.txt again before any request, and waits (bounded) for the exits meanwhile.
    expect(h.fetchJobs).toHaveLength(1);
    expect(h.links.rows.get(link.id)!.status).not.toBe('failed');
  });

  it('pauses the link and the domain for at least Retry-After when the probe is rate-limited, and fetches nothing', async () => {
    const h = makeHarness();
    const link = h.links.add('https://busy.example/a', { riskLevel: 1 });
    const r = router(h, async (url) => response(url, { status: 429, headers: { 'content-type': 'text/html', 'retry-after': '7200' }, html: '<h1>Too Many Requests</h1>' }));
    const job = fakeJob({ linkId: link.id, url: link.url });
    const before = Date.now();
    await expect(r.process(job)).rejects.toBeInstanceOf(DelayedError);
    const until = h.clock.now().getTime() + 7_200_000;
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'paused', pausedUntil: new Date(until), riskLevel: 2, lastErrorType: 'rate_limited' });
    expect(h.pausedDomains).toEqual([{ domain: 'busy.example', untilMs: until }]);
    expect(job.delayedTo[0]! - before).toBeGreaterThanOrEqual(7_200_000);
    expect(h.fetchJobs).toHaveLength(0);
    expect(h.attempts).toHaveLength(0);
  });

  it('backs off by the block table when a rate-limited probe names no time, within PAUSE_MAX_MS', async () => {
    const h = makeHarness();
    const link = h.links.add('https://busy.example/b');
    const r = router(h, async (url) => response(url, { status: 503, headers: { 'content-type': 'text/html', 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, html: '<p>busy</p>' }), { pauseMaxMs: 5_000 });
    await expect(r.process(fakeJob({ linkId: link.id, url: link.url }))).rejects.toBeInstanceOf(DelayedError);
    // The date is 30 s after the harness clock: it beats the 5 s cap on the table.
    expect(h.links.rows.get(link.id)?.pausedUntil).toEqual(new Date(h.clock.now().getTime() + 30_000));
    const bare = h.links.add('https://busy.example/c');
    const r2 = router(h, async (url) => response(url, { status: 429, html: '<p>slow down</p>' }), { pauseMaxMs: 5_000 });
    await expect(r2.process(fakeJob({ linkId: bare.id, url: bare.url }))).rejects.toBeInstanceOf(DelayedError);
    expect(h.links.rows.get(bare.id)?.pausedUntil).toEqual(new Date(h.clock.now().getTime() + 5_000));
    expect(h.fetchJobs).toHaveLength(0);
  });

  it('pauses the link, not its domain, when robots.txt cannot be read, and fails it with site_unreachable only when its checks are used up', async () => {
    const h = makeHarness();
    const link = h.links.add('https://down.example/a');
    let checks = 0;
    const process = createRouteProcessor({
      ...h.common, learning: h.learning, routes: h.routes, probeStore: h.probeStore,
      settings: { ...settings, maxAttempts: 2, pause: { unreachableBasePauseMs: 60_000 } },
      robots: {
        check: async () => {
          checks += 1;
          return { allowed: false, crawlDelayMs: null, reason: 'robots.txt unreachable (ECONNREFUSED)', unreachable: { retryAtMs: 0 } };
        },
      },
      probe: async () => {
        throw new Error('must not probe');
      },
    });
    const job = fakeJob({ linkId: link.id, url: link.url });
    await expect(process(job)).rejects.toBeInstanceOf(DelayedError);
    const until = h.clock.now().getTime() + 60_000;
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'paused', pausedUntil: new Date(until), riskLevel: 1, lastErrorType: 'site_unreachable', lastError: 'robots.txt unreachable (ECONNREFUSED)' });
    // robots.txt is an origin's: another port or scheme of the host may be up, so the domain does not pause.
    expect(h.pausedDomains).toEqual([]);
    expect(job.delayedTo).toHaveLength(1);
    // The pause ends and the site still cannot be read: that was the second check of two.
    h.clock.advance(60_000);
    expect(await process(fakeJob({ linkId: link.id, url: link.url }))).toMatchObject({ kind: 'failed', errorType: 'site_unreachable' });
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'failed', lastErrorType: 'site_unreachable' });
    expect(h.links.rows.get(link.id)?.lastError).toContain('2 checks in a row');
    expect(checks).toBe(2);
    expect(h.fetchJobs).toHaveLength(0);
  });

  it('gives a link waiting on its domain\'s pause the pause\'s reason', async () => {
    const h = makeHarness();
    const link = h.links.add('https://held.example/a');
    const untilMs = h.clock.now().getTime() + 90_000;
    const process = createRouteProcessor({
      ...h.common, settings, learning: h.learning, routes: h.routes, probeStore: h.probeStore,
      gate: { ...h.common.gate, acquire: async () => ({ granted: false, reason: 'paused', retryInMs: 90_000 }), domainPause: async () => ({ untilMs, reason: 'rate_limited' }) },
      probe: async () => {
        throw new Error('must not probe');
      },
    });
    await expect(process(fakeJob({ linkId: link.id, url: link.url }))).rejects.toBeInstanceOf(DelayedError);
    expect(h.links.rows.get(link.id)).toMatchObject({
      status: 'paused', pausedUntil: new Date(untilMs), lastErrorType: 'rate_limited', lastError: `domain held.example paused (rate_limited) until ${new Date(untilMs).toISOString()}`,
    });
  });

  it('carries the route job\'s priority to the fetch job', async () => {
    const h = makeHarness({ best: { best: score('playwright', 0.9), scores: [] } });
    const urgent = h.links.add('https://prio.example/a');
    const plain = h.links.add('https://prio.example/b');
    const r = router(h, async () => {
      throw new Error('must not probe');
    });
    await r.process(fakeJob({ linkId: urgent.id, url: urgent.url, priority: 2 }));
    await r.process(fakeJob({ linkId: plain.id, url: plain.url }));
    expect(h.fetchJobs.map((j) => [j.linkId, j.priority])).toEqual([[urgent.id, 2], [plain.id, undefined]]);
  });

  it('delays a paused link until its pause ends instead of routing it', async () => {
    const h = makeHarness();
    const until = new Date(h.clock.now().getTime() + 600_000);
    const link = h.links.add('https://paused.example/', { pausedUntil: until, status: 'paused' });
    const r = router(h, async () => {
      throw new Error('must not probe');
    });
    const job = fakeJob({ linkId: link.id, url: link.url });
    const before = Date.now();
    await expect(r.process(job)).rejects.toBeInstanceOf(DelayedError);
    expect(job.delayedTo).toHaveLength(1);
    expect(job.delayedTo[0]! - before).toBeGreaterThanOrEqual(600_000);
    expect(h.fetchJobs).toHaveLength(0);
    expect(h.links.rows.get(link.id)?.status).toBe('paused');
  });

  it('routes a link whose pause has ended', async () => {
    const h = makeHarness({ best: { best: score('simple_http', 1), scores: [] } });
    const link = h.links.add('https://paused.example/', { pausedUntil: new Date(h.clock.now().getTime() - 1), status: 'paused', generation: 1 });
    const out = await router(h, async (u) => response(u)).process(fakeJob({ linkId: link.id, url: link.url, generation: 1, reason: 'resume' }));
    expect(out).toMatchObject({ kind: 'routed' });
    expect(h.fetchJobs[0]?.generation).toBe(1);
  });

  it('re-routes a blocked link to the escalated fetcher instead of the learned one that was just blocked', async () => {
    const h = makeHarness({ best: { best: score('playwright', 0.9), scores: [] } });
    const link = h.links.add('https://walled.example/', { pausedUntil: new Date(h.clock.now().getTime() - 1), status: 'paused', generation: 1 });
    const r = router(h, async () => {
      throw new Error('must not probe');
    });
    const out = await r.process(fakeJob({ linkId: link.id, url: link.url, generation: 1, reason: 'resume', nextFetcher: 'playwright_stealth', blockedFetcher: 'playwright' }));
    expect(out).toMatchObject({ kind: 'routed', fetcher: 'playwright_stealth', source: 'retry' });
    expect(h.fetchJobs[0]).toMatchObject({ fetcher: 'playwright_stealth', selectionSource: 'retry', generation: 1 });
  });

  it('probes instead when the escalation names a fetcher the fleet does not run, never re-using the blocked one', async () => {
    const h = makeHarness({ best: { best: score('playwright', 0.9), scores: [] } });
    const link = h.links.add('https://walled.example/b');
    const r = router(h, async (u) => response(u, { html: STATIC_HTML }), { fetcherNames: ['simple_http', 'playwright'] });
    const out = await r.process(fakeJob({ linkId: link.id, url: link.url, generation: 1, reason: 'resume', nextFetcher: 'playwright_stealth', blockedFetcher: 'playwright' }));
    expect(out).toMatchObject({ kind: 'routed', fetcher: 'simple_http', source: 'probe' });
    expect(r.probes()).toBe(1);
  });

  it('hands on a confidence within [0, 1] even when the store\'s rounding puts it just above 1', async () => {
    const h = makeHarness({ best: { best: score('simple_http', 1.0000163), scores: [] } });
    const link = h.links.add('https://files.example/doc.pdf');
    const out = await router(h, async () => {
      throw new Error('must not probe');
    }).process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ kind: 'routed', source: 'learned', confidence: 1 });
    expect(h.fetchJobs[0]?.confidence).toBe(1);
  });

  it('fails the link when the decision names a fetcher nobody runs', async () => {
    const h = makeHarness({ best: { best: score('archive_proxy', 0.95), scores: [] } });
    const link = h.links.add('https://x.example/');
    const out = await router(h, async (u) => response(u)).process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ kind: 'failed', errorType: 'unknown_fetcher' });
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'failed', lastErrorType: 'unknown_fetcher' });
    expect(h.fetchJobs).toHaveLength(0);
  });

  it('skips links that are already done and rejects bad payloads', async () => {
    const h = makeHarness();
    const link = h.links.add('https://done.example/', { status: 'done' });
    const r = router(h, async (u) => response(u));
    expect(await r.process(fakeJob({ linkId: link.id, url: link.url }))).toEqual({ kind: 'skipped', reason: 'link_done' });
    await expect(r.process(fakeJob({ linkId: 'x', url: 1 }))).rejects.toBeInstanceOf(InvalidJobPayloadError);
  });
});

describe('route processor, per-domain policy', () => {
  const mustNotProbe = async (): Promise<never> => {
    throw new Error('must not probe');
  };
  const domainOf = (attempts: Array<Partial<DomainAttempt> & { fetcher: string; daysAgo: number }>, now: Date): DomainStateReader => ({
    recentDomainAttempts: async () =>
      attempts.map(({ daysAgo, ...a }) => ({ success: true, isBanned: false, errorType: null, selectionSource: 'probe', ...a, attemptedAt: new Date(now.getTime() - daysAgo * DAY_MS) })),
  });

  it('asks the learned store with the routing heuristics only, not the ones every site shares', async () => {
    const h = makeHarness();
    const asked: Heuristic[][] = [];
    const learning: LearnedSelector = {
      findBestFetcher: async (hs) => {
        asked.push(hs);
        return { best: null, scores: [] };
      },
    };
    const link = h.links.add('https://files.example/a/b/report.pdf');
    await router(h, async (u) => response(u, { html: STATIC_HTML }), {}, undefined, learning).process(fakeJob({ linkId: link.id, url: link.url }));
    expect(asked).toEqual([[{ type: 'domain', value: 'files.example' }, { type: 'suffix', value: '.pdf' }]]);
  });

  it('sends a domain with too few attempts for a score to its latest working browser, without a probe', async () => {
    const h = makeHarness();
    const link = h.links.add('https://walled.example/p2');
    const state = domainOf([{ fetcher: 'playwright_stealth', daysAgo: 8, selectionSource: 'probe' }], h.clock.now());
    const out = await router(h, mustNotProbe, {}, state).process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ kind: 'routed', fetcher: 'playwright_stealth', source: 'domain_memory' });
  });

  it('probes again when the browser was last shown necessary too long ago (an SPA may have moved to server rendering)', async () => {
    const h = makeHarness();
    const link = h.links.add('https://spa.example/p4');
    const state = domainOf([{ fetcher: 'playwright', daysAgo: 8, selectionSource: 'domain_memory' }, { fetcher: 'playwright', daysAgo: 24, selectionSource: 'probe' }], h.clock.now());
    const r = router(h, async (u) => response(u, { html: STATIC_HTML }), {}, state);
    expect(await r.process(fakeJob({ linkId: link.id, url: link.url }))).toMatchObject({ fetcher: 'simple_http', source: 'probe', probeReused: true });
    expect(r.probes()).toBe(1);
  });

  it('sets aside a confident learned fetcher that this domain just refused, and the memory of it', async () => {
    const h = makeHarness({ best: { best: score('simple_http', 0.9), scores: [] } });
    const link = h.links.add('https://newwall.example/p3');
    const state = domainOf([{ fetcher: 'simple_http', daysAgo: 0, success: false, isBanned: true, errorType: 'blocked_captcha' }, { fetcher: 'simple_http', daysAgo: 8 }], h.clock.now());
    const r = router(h, async (u) => response(u, { html: SPA_HTML }), {}, state);
    expect(await r.process(fakeJob({ linkId: link.id, url: link.url }))).toMatchObject({ fetcher: 'playwright', source: 'probe' });
    expect(r.probes()).toBe(1);
  });

  it('keeps a confident learned choice the domain has not refused, and ignores the domain when disabled', async () => {
    const h = makeHarness({ best: { best: score('simple_http', 0.9), scores: [] } });
    const a = h.links.add('https://ok.example/a');
    const state = domainOf([{ fetcher: 'simple_http', daysAgo: 1 }], h.clock.now());
    expect(await router(h, mustNotProbe, {}, state).process(fakeJob({ linkId: a.id, url: a.url }))).toMatchObject({ fetcher: 'simple_http', source: 'learned' });
    const h2 = makeHarness();
    const b = h2.links.add('https://walled.example/b');
    const walled = domainOf([{ fetcher: 'playwright_stealth', daysAgo: 1 }], h2.clock.now());
    const r = router(h2, async (u) => response(u, { html: STATIC_HTML }), { domainMemoryEnabled: false }, walled);
    expect(await r.process(fakeJob({ linkId: b.id, url: b.url }))).toMatchObject({ source: 'probe' });
  });
});

describe('route processor, legacy mode', () => {
  it('uses the hard-coded route of the domain', async () => {
    const h = makeHarness({ route: 'direct_access' });
    const link = h.links.add('https://legacy.example/a');
    const out = await router(h, async () => {
      throw new Error('no probe in legacy mode');
    }, { learningModeEnabled: false }).process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ fetcher: 'simple_http', source: 'hard_coded' });
  });

  it('uses the default fetcher for a domain without a route, or fails the link with no_route', async () => {
    const h = makeHarness({ route: null });
    const a = h.links.add('https://a.example/');
    const b = h.links.add('https://b.example/');
    expect(await router(h, async (u) => response(u), { learningModeEnabled: false, defaultFetcher: 'playwright' }).process(fakeJob({ linkId: a.id, url: a.url }))).toMatchObject({ fetcher: 'playwright', source: 'default' });
    expect(await router(h, async (u) => response(u), { learningModeEnabled: false }).process(fakeJob({ linkId: b.id, url: b.url }))).toMatchObject({ kind: 'failed', errorType: 'no_route' });
    expect(h.links.rows.get(b.id)?.lastError).toMatch(/no route for domain b.example/);
  });

  it('lets a link override the global flag', async () => {
    const h = makeHarness({ route: 'playwright' });
    const link = h.links.add('https://legacy.example/b', { learningModeEnabled: false });
    const out = await router(h, async (u) => response(u, { html: STATIC_HTML })).process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ fetcher: 'playwright', source: 'hard_coded' });
  });

  it('skips a route job of an older generation than its link: the reconciler gave the link a newer job', async () => {
    const h = makeHarness({ route: 'playwright' });
    const link = h.links.add('https://legacy.example/stale', { learningModeEnabled: false, generation: 2 });
    const out = await router(h, async (u) => response(u, { html: STATIC_HTML })).process(fakeJob({ linkId: link.id, url: link.url, generation: 1 }));
    expect(out).toMatchObject({ kind: 'skipped', reason: 'stale_generation' });
    expect(h.fetchJobs).toHaveLength(0);
    expect(h.links.rows.get(link.id)?.status).toBe('queued');
  });
});

describe('route processor, inline fetches (FETCH_INLINE)', () => {
  function inlineRouter(h: ReturnType<typeof makeHarness>, claim: NonNullable<Parameters<typeof createRouteProcessor>[0]['inline']>['claim']) {
    return createRouteProcessor({
      ...h.common,
      settings,
      learning: h.learning,
      routes: h.routes,
      probeStore: h.probeStore,
      probe: async () => {
        throw new Error('must not probe');
      },
      inline: { claim },
    });
  }

  it('fetches the link itself when a slot is free instead of adding a fetch job, its decision left to the outcome\'s write', async () => {
    const h = makeHarness({ best: { best: score('simple_http', 0.9), scores: [] } });
    const link = h.links.add('https://static.example/a');
    const ran: { url: string; status: string | undefined; handed: unknown; decision: unknown }[] = [];
    const process = inlineRouter(h, (fetcher) =>
      fetcher === 'simple_http' ? { run: async (input, _owner, handed, decision) => void ran.push({ url: input.url, status: h.links.rows.get(input.linkId)?.status, handed, decision }) } : null,
    );
    const out = await process(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ kind: 'routed', fetcher: 'simple_http', source: 'learned', inline: true });
    // Nothing written before the fetch: the link is as the route job found it, and the decision goes with the fetch,
    // whose outcome writes it (one update of the link a page).
    expect(ran).toEqual([{ url: link.url, status: 'queued', handed: { ...link, status: 'fetching', fetcher: 'simple_http', selectionSource: 'learned' }, decision: { status: 'fetching', fetcher: 'simple_http', selectionSource: 'learned' } }]);
    expect(h.links.rows.get(link.id)).toEqual(link);
    expect(h.fetchJobs).toEqual([]);
  });

  it('adds the fetch job as before when no slot is free', async () => {
    const h = makeHarness({ best: { best: score('simple_http', 0.9), scores: [] } });
    const link = h.links.add('https://static.example/b');
    const out = await inlineRouter(h, () => null)(fakeJob({ linkId: link.id, url: link.url }));
    expect(out).toMatchObject({ kind: 'routed', fetcher: 'simple_http' });
    expect(out).not.toHaveProperty('inline');
    expect(h.fetchJobs[0]).toMatchObject({ linkId: link.id, fetcher: 'simple_http' });
  });
});

describe('withChange', () => {
  it('is the link after the change was written: fields replaced, attempts added', () => {
    const h = makeHarness();
    const link = h.links.add('https://static.example/w', { status: 'routing', attemptCount: 2 });
    const at = new Date('2026-01-02T03:04:05Z');
    expect(withChange(link, { status: 'fetching', fetcher: 'playwright', pausedUntil: null })).toEqual({ ...link, status: 'fetching', fetcher: 'playwright', pausedUntil: null });
    expect(withChange(link, { attemptsMade: 3, lastAttemptAt: at })).toEqual({ ...link, attemptCount: 5, lastAttemptAt: at });
  });
});
