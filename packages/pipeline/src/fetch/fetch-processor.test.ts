import { describe, expect, it } from 'vitest';
import { DelayedError } from 'bullmq';
import { CrawlerError, silentLogger, type Logger } from '@crawler/core';
import { createFetchProcessor, type FetchSettings } from './fetch-processor.js';
import type { ArmBlock } from './blocked-arms.js';
import type { WallStreak } from '@crawler/core';
import type { WallRefusal } from './wall-streaks.js';
import { EMPTY_HTML, STATIC_HTML, fakeJob, makeHarness, response } from '../__fixtures__/fakes.js';

const settings: FetchSettings = { fetcherNames: ['simple_http', 'playwright', 'playwright_stealth'], maxAttempts: 4, pauseMaxMs: 24 * 3600_000, fetchTimeoutMs: 1000, fetchMaxBytes: 1 << 20 };

function fetchProc(h: ReturnType<typeof makeHarness>, over: Partial<Parameters<typeof createFetchProcessor>[0]> = {}, s: Partial<FetchSettings> = {}) {
  return createFetchProcessor({
    ...h.common,
    settings: { ...settings, ...s },
    enqueueRoute: h.enqueueRoute,
    fetchers: h.fetchers,
    probeStore: h.probeStore,
    outcomes: h.outcomes,
    ...over,
  });
}

const job = (linkId: string, url: string, extra: Record<string, unknown> = {}) =>
  fakeJob({ linkId, url, fetcher: 'simple_http', selectionSource: 'probe', ...extra }, 'fetch-simple_http');

describe('fetch processor', () => {
  it('reuses the probe body: no request, one attempt, content stored, link done', async () => {
    const h = makeHarness();
    const link = h.links.add('https://static.example/a', { status: 'fetching' });
    await h.probeStore.save(link.id, { status: 200, headers: { 'content-type': 'text/html' }, finalUrl: link.url, contentType: 'text/html', body: new TextEncoder().encode(STATIC_HTML), text: STATIC_HTML });
    const setbacks: string[] = [];
    const out = await fetchProc(h, { setbacks: { record: (d) => setbacks.push(d) } })(job(link.id, link.url, { probe: { key: `probe:${link.id}`, status: 200, bodyBytes: 10 } }));
    expect(out).toMatchObject({ outcome: 'done', attempts: 1 });
    expect(setbacks).toEqual([]);
    expect(h.fetchCalls).toEqual([]);
    expect(h.attempts).toHaveLength(1);
    expect(h.attempts[0]).toMatchObject({ fetcher: 'simple_http', success: true, selectionSource: 'probe', httpStatus: 200 });
    expect(h.attempts[0]!.heuristics.some((x) => x.type === 'domain')).toBe(true);
    expect(h.saved).toHaveLength(1);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'done', attemptCount: 1, riskLevel: 0 });
    expect(h.probes.size).toBe(0);
  });

  it("hands a crawl's discovery the encoding the document was read in: a browser's, and a reused probe's", async () => {
    const h = makeHarness();
    const crawlId = '00000000-0000-4000-8000-0000000000c5';
    const seen: Array<string | undefined> = [];
    const proc = fetchProc(h, { discovery: { discover: async (page) => (seen.push(page.charset), { offScope: null }) } });
    // A browser's page: its DOM is UTF-8 (no `charset`), the document was windows-1251.
    const rendered = h.links.add('https://cp1251.example/rendered', { status: 'fetching', crawlId });
    h.script(response(rendered.url, { html: STATIC_HTML, documentCharset: 'windows-1251' }));
    await proc(fakeJob({ linkId: rendered.id, url: rendered.url, fetcher: 'playwright', selectionSource: 'probe' }, 'fetch-playwright'));
    // A probe's page, stored by the router and reused: plain HTTP decoded it from Shift_JIS.
    const probed = h.links.add('https://sjis.example/probed', { status: 'fetching', crawlId });
    await h.probeStore.save(probed.id, { status: 200, headers: { 'content-type': 'text/html' }, finalUrl: probed.url, contentType: 'text/html', body: new TextEncoder().encode(STATIC_HTML), text: STATIC_HTML, charset: 'shift_jis' });
    await proc(job(probed.id, probed.url, { probe: { key: `probe:${probed.id}`, status: 200, bodyBytes: 10 } }));
    expect(seen).toEqual(['windows-1251', 'shift_jis']);
  });

  it('takes the link a router handed it (an inline fetch) instead of reading it, and only when it is the job\'s link', async () => {
    const h = makeHarness();
    const link = h.links.add('https://static.example/handed', { status: 'fetching' });
    const other = h.links.add('https://static.example/other', { status: 'fetching' });
    let reads = 0;
    const links = { get: async (id: string) => (reads++, h.links.get(id)) };
    h.script(response(link.url, { html: STATIC_HTML }), response(link.url, { html: STATIC_HTML }));
    const handed = { ...h.links.rows.get(link.id)! };
    await expect(fetchProc(h, { links })({ ...job(link.id, link.url), link: handed })).resolves.toMatchObject({ outcome: 'done' });
    expect(reads).toBe(0);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'done' });
    expect(h.attempts[0]).toMatchObject({ linkId: link.id, success: true });
    // Another link's record is never taken for this job's.
    const link2 = h.links.add('https://static.example/second', { status: 'fetching' });
    await fetchProc(h, { links })({ ...job(link2.id, link2.url), link: h.links.rows.get(other.id)! });
    expect(reads).toBe(1);
  });

  it('writes the router\'s pending decision (an inline fetch\'s) in the outcome\'s statement, under the outcome\'s own change', async () => {
    const h = makeHarness();
    const link = h.links.add('https://static.example/pending', { status: 'queued', fetcher: null, selectionSource: null });
    h.script(response(link.url, { html: STATIC_HTML }));
    const pendingLink = { change: { status: 'fetching', fetcher: 'simple_http', selectionSource: 'learned' } as const };
    await expect(fetchProc(h)({ ...job(link.id, link.url), link: { ...link, status: 'fetching' }, pendingLink })).resolves.toMatchObject({ outcome: 'done' });
    expect(h.outcomes.writes).toHaveLength(1);
    expect(h.outcomes.writes[0]!.link).toMatchObject({ status: 'done', fetcher: 'simple_http', selectionSource: 'learned' });
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'done', fetcher: 'simple_http', selectionSource: 'learned' });
    expect(pendingLink.change).toBeNull();

    // A fetch that ends in a pause: the pause's status wins, the decision's fetcher stays (a resume reads it).
    const paused = h.links.add('https://static.example/pending-403', { status: 'queued', fetcher: null });
    h.script(response(paused.url, { status: 403, html: '<html><body>Forbidden</body></html>' }));
    const pending403 = { change: { status: 'fetching', fetcher: 'simple_http', selectionSource: 'learned' } as const };
    await fetchProc(h)({ ...job(paused.id, paused.url), link: { ...paused, status: 'fetching' }, pendingLink: pending403 });
    expect(h.links.rows.get(paused.id)).toMatchObject({ status: 'paused', fetcher: 'simple_http', selectionSource: 'learned' });
    expect(pending403.change).toBeNull();
  });

  it('says the request is done before it writes the outcome, once, after an immediate retry too', async () => {
    const h = makeHarness();
    const link = h.links.add('https://flaky.example/done', { status: 'fetching' });
    h.script(new CrawlerError('network_error', 'reset'), response(link.url, { html: STATIC_HTML }));
    const seen: string[] = [];
    const outcomes = { apply: async (w: Parameters<typeof h.outcomes.apply>[0]) => (seen.push('write'), h.outcomes.apply(w)) };
    const out = await fetchProc(h, { outcomes })(job(link.id, link.url), undefined, { onRequestDone: () => seen.push(`done after ${h.fetchCalls.length} requests`) });
    expect(out).toMatchObject({ outcome: 'done', attempts: 2 });
    expect(seen).toEqual(['done after 2 requests', 'write']);
  });

  it('retries a timeout once at once, logs both attempts, then pauses with a delayed re-route', async () => {
    const h = makeHarness();
    const link = h.links.add('https://slow.example/', { status: 'fetching' });
    h.script(new CrawlerError('timeout', 'too slow'), new CrawlerError('timeout', 'still slow'));
    const out = await fetchProc(h)(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'paused', attempts: 2, errorType: 'timeout' });
    expect(h.fetchCalls).toHaveLength(2);
    expect(h.attempts.map((a) => [a.success, a.errorType, a.selectionSource])).toEqual([
      [false, 'timeout', 'probe'],
      [false, 'timeout', 'retry'],
    ]);
    expect(h.routeJobs).toHaveLength(1);
    expect(h.routeJobs[0]!.input).toMatchObject({ linkId: link.id, generation: 1, reason: 'resume' });
    expect(h.routeJobs[0]!.delayMs).toBe(5 * 60_000);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'paused', attemptCount: 2 });
    // What the error said is on each attempt and on the link, not only in the worker's log.
    expect(h.attempts.map((a) => a.errorMessage)).toEqual(['too slow', 'still slow']);
    expect(h.links.rows.get(link.id)?.lastError).toBe('timeout: still slow');
  });

  it('fails a link on its last attempt with the error in words: max_attempts, the code and the message', async () => {
    const h = makeHarness();
    const link = h.links.add('https://cut.example/', { status: 'fetching', attemptCount: 3 });
    const cut = () => new CrawlerError('network_error', 'UND_ERR_SOCKET: other side closed (17 of 5000 body bytes received)');
    h.script(cut(), cut());
    const out = await fetchProc(h)(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'failed', errorType: 'network_error' });
    expect(h.links.rows.get(link.id)?.lastError).toBe('max_attempts:network_error: UND_ERR_SOCKET: other side closed (17 of 5000 body bytes received)');
    expect(h.attempts.at(-1)).toMatchObject({ errorType: 'network_error', errorMessage: 'UND_ERR_SOCKET: other side closed (17 of 5000 body bytes received)' });
    // A message that quotes a proxy URL does not show its credentials on the link.
    const proxied = h.links.add('https://cut.example/proxied', { status: 'fetching', attemptCount: 3 });
    const hangUp = () => new CrawlerError('network_error', 'socket hang up through http://user:s3cret@10.0.0.1:8080');
    h.script(hangUp(), hangUp());
    await fetchProc(h)(job(proxied.id, proxied.url));
    expect(h.links.rows.get(proxied.id)?.lastError).toBe('max_attempts:network_error: socket hang up through http://***@10.0.0.1:8080');
  });

  it('names the HTTP status of a server error on the link: a 502 and a 503 are not the same outage', async () => {
    const h = makeHarness();
    const link = h.links.add('https://down.example/', { status: 'fetching', attemptCount: 3 });
    h.script(response(link.url, { status: 502, html: '<html><body>Bad gateway</body></html>' }), response(link.url, { status: 502, html: '<html><body>Bad gateway</body></html>' }));
    expect(await fetchProc(h)(job(link.id, link.url))).toMatchObject({ outcome: 'failed', errorType: 'http_error', httpStatus: 502 });
    expect(h.links.rows.get(link.id)?.lastError).toBe('max_attempts:http_error: HTTP 502');
    const paused = h.links.add('https://down.example/paused', { status: 'fetching' });
    h.script(response(paused.url, { status: 500, html: '<html><body>Oops</body></html>' }), response(paused.url, { status: 500, html: '<html><body>Oops</body></html>' }));
    await fetchProc(h)(job(paused.id, paused.url));
    expect(h.links.rows.get(paused.id)).toMatchObject({ status: 'paused', lastError: 'http_error: HTTP 500' });
  });

  it('succeeds on the immediate retry after a network error', async () => {
    const h = makeHarness();
    const link = h.links.add('https://flaky.example/', { status: 'fetching' });
    h.script(new CrawlerError('network_error', 'reset'), response(link.url, { html: STATIC_HTML }));
    const out = await fetchProc(h)(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'done', attempts: 2 });
    expect(h.attempts.map((a) => a.success)).toEqual([false, true]);
  });

  it('marks a 403 as banned, raises the risk level, pauses link and domain by the table', async () => {
    const h = makeHarness();
    const link = h.links.add('https://blocked.example/p', { status: 'fetching' });
    h.script(response(link.url, { status: 403, html: '<html><body>Forbidden</body></html>' }));
    const setbacks: string[] = [];
    const out = await fetchProc(h, { setbacks: { record: (d) => setbacks.push(d) } })(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'paused', errorType: 'blocked_403' });
    // The router of this process stops reusing its cached choice for the domain.
    expect(setbacks).toEqual(['blocked.example']);
    expect(h.attempts[0]).toMatchObject({ success: false, isBanned: true, errorType: 'blocked_403', httpStatus: 403 });
    const row = h.links.rows.get(link.id)!;
    expect(row.riskLevel).toBe(1);
    expect(row.pausedUntil!.getTime() - h.clock.now().getTime()).toBe(10 * 60_000);
    expect(h.pausedDomains).toEqual([{ domain: 'blocked.example', untilMs: row.pausedUntil!.getTime() }]);
    expect(h.routeJobs[0]!.delayMs).toBe(10 * 60_000);
    expect(h.routeJobs[0]!.input).toMatchObject({ blockedFetcher: 'simple_http', nextFetcher: 'playwright_stealth' });
  });

  it('a wall that refused the strongest tool: links waiting on it fail once WALL_MAX_WAIT_MS has passed, and the site backs off by its streak', async () => {
    const h = makeHarness();
    const streaks = memoryStreaks();
    let paused = false;
    const gate = {
      ...h.common.gate,
      acquire: async (domain: string, o?: { queued?: boolean }) => (paused ? { granted: false as const, reason: 'paused' as const, retryInMs: 20 * 60_000 } : h.common.gate.acquire(domain, o)),
      domainPause: async () => null,
    };
    const proc = fetchProc(h, { gate, wallStreaks: streaks }, { wallMaxWaitMs: 60 * 60_000 });
    const walled = () => response('https://walled.example/', { status: 403, html: '<html><body>Forbidden</body></html>' });
    // The stealth browser, the top of this fleet's ladder, is refused: the link pauses, the wall's wait starts.
    const first = h.links.add('https://walled.example/1', { status: 'fetching' });
    h.script(walled());
    expect(await proc(job(first.id, first.url, { fetcher: 'playwright_stealth' }))).toMatchObject({ outcome: 'paused', errorType: 'blocked_403' });
    expect(streaks.map.get('walled.example')).toMatchObject({ refusals: 1, topSinceMs: h.clock.now().getTime() });

    // A link fed meanwhile waits at the site's pause, never past the wall's budget.
    paused = true;
    const fed = h.links.add('https://walled.example/2', { status: 'fetching' });
    const waiting = job(fed.id, fed.url, { fetcher: 'playwright_stealth' });
    h.clock.advance(50 * 60_000);
    await expect(proc(waiting)).rejects.toThrow();
    expect(h.links.rows.get(fed.id)).toMatchObject({ status: 'paused' });
    expect(waiting.delayedTo[0]! - Date.now()).toBeLessThanOrEqual(10 * 60_000);

    // The budget is spent: the waiting link ends, with the wall's error and why, and no request.
    h.clock.advance(10 * 60_000);
    expect(await proc(job(fed.id, fed.url, { fetcher: 'playwright_stealth' }))).toMatchObject({ outcome: 'failed', errorType: 'blocked_403' });
    expect(h.links.rows.get(fed.id)).toMatchObject({ status: 'failed', lastErrorType: 'blocked_403' });
    expect(h.links.rows.get(fed.id)!.lastError).toMatch(/refused every tool of the fleet up to playwright_stealth \(1 refusals in a row/);
    expect(h.fetchCalls).toHaveLength(1);

    // The site's pause ends and the wall still stands: the refused link fails at once, and the site pauses by its
    // streak (2 refusals: 20 min), not by the new link's own risk level (10 min).
    paused = false;
    const late = h.links.add('https://walled.example/3', { status: 'fetching' });
    h.script(walled());
    expect(await proc(job(late.id, late.url, { fetcher: 'playwright_stealth' }))).toMatchObject({ outcome: 'failed', errorType: 'blocked_403' });
    expect(h.attempts.at(-1)).toMatchObject({ linkId: late.id, isBanned: true, errorType: 'blocked_403' });
    expect(h.pausedDomains.at(-1)).toEqual({ domain: 'walled.example', untilMs: h.clock.now().getTime() + 20 * 60_000 });
  });

  it('a link paused by a refusal resumes when the site\'s pause ends, not at its own shorter pause (no run of its job inside the site\'s pause)', async () => {
    const h = makeHarness();
    const streaks = memoryStreaks();
    const proc = fetchProc(h, { wallStreaks: streaks });
    const forbidden = (url: string) => response(url, { status: 403, html: '<html><body>Forbidden</body></html>' });
    const a = h.links.add('https://streak.example/1', { status: 'fetching' });
    h.script(forbidden(a.url));
    expect(await proc(job(a.id, a.url))).toMatchObject({ outcome: 'paused' });
    h.clock.advance(10 * 60_000);
    // The second refusal in a row: the site pauses 20 min by its streak; the new link's own risk (0) says 10.
    const b = h.links.add('https://streak.example/2', { status: 'fetching' });
    h.script(forbidden(b.url));
    expect(await proc(job(b.id, b.url))).toMatchObject({ outcome: 'paused' });
    const siteUntil = h.clock.now().getTime() + 20 * 60_000;
    expect(h.pausedDomains.at(-1)).toEqual({ domain: 'streak.example', untilMs: siteUntil });
    expect(h.links.rows.get(b.id)!.pausedUntil!.getTime()).toBe(siteUntil);
    expect(h.routeJobs.at(-1)!.delayMs).toBe(20 * 60_000);
  });

  it('a refusal with a stronger tool left starts no wall wait, and a page served ends the site\'s streak', async () => {
    const h = makeHarness();
    const streaks = memoryStreaks();
    const proc = fetchProc(h, { wallStreaks: streaks }, { wallMaxWaitMs: 1 });
    const a = h.links.add('https://climb.example/1', { status: 'fetching' });
    h.script(response(a.url, { status: 403, html: '<html><body>Forbidden</body></html>' }));
    expect(await proc(job(a.id, a.url))).toMatchObject({ outcome: 'paused' });
    expect(streaks.map.get('climb.example')).toMatchObject({ refusals: 1, topSinceMs: null });
    // Without stealth in the fleet the plain browser is the top: its refusal, after the site's pause, starts the wait.
    h.clock.advance(10 * 60_000);
    const noStealth = fetchProc(h, { wallStreaks: streaks }, { fetcherNames: ['simple_http', 'playwright'], wallMaxWaitMs: 60_000 });
    const b = h.links.add('https://climb.example/2', { status: 'fetching' });
    h.script(response(b.url, { status: 403, html: '<html><body>Forbidden</body></html>' }));
    expect(await noStealth(job(b.id, b.url, { fetcher: 'playwright' }))).toMatchObject({ outcome: 'paused' });
    expect(streaks.map.get('climb.example')).toMatchObject({ refusals: 2, topSinceMs: h.clock.now().getTime(), fetcher: 'playwright' });
    const c = h.links.add('https://climb.example/3', { status: 'fetching' });
    h.script(response(c.url, { html: STATIC_HTML }));
    expect(await noStealth(job(c.id, c.url, { fetcher: 'playwright' }))).toMatchObject({ outcome: 'done' });
    expect(streaks.map.has('climb.example')).toBe(false);
  });

  it('a refusal reaches the jobs already routed to the arm: a job that waited since climbs the same way without a request', async () => {
    const h = makeHarness();
    const memory = new Map<string, ArmBlock>();
    const blockedArms = { record: async (d: string, arm: string, b: ArmBlock) => void memory.set(`${d} ${arm}`, b), latest: async (d: string, arm: string) => memory.get(`${d} ${arm}`) ?? null };
    const gate = { ...h.common.gate, domainPausedUntil: async (d: string) => h.pausedDomains.find((p) => p.domain === d)?.untilMs ?? null };
    const proc = fetchProc(h, { blockedArms, gate });
    const routedAt = Date.now() - 5_000;
    const first = h.links.add('https://burst.example/1', { status: 'fetching' });
    const second = h.links.add('https://burst.example/2', { status: 'fetching' });
    const third = h.links.add('https://burst.example/3', { status: 'fetching' });
    // The first link's request is refused: its climb is remembered for the site and arm.
    h.script(response(first.url, { status: 403, html: '<html><body>Forbidden</body></html>' }));
    await proc({ ...job(first.id, first.url), timestamp: routedAt });
    expect(memory.get('burst.example simple_http')).toMatchObject({ errorType: 'blocked_403', nextFetcher: 'playwright_stealth', blockedFetcher: 'simple_http' });
    expect(h.fetchCalls).toHaveLength(1);
    // The second was routed with it (before the refusal) and waited at the site's pause: no request, no attempt, the same climb.
    const out = await proc({ ...job(second.id, second.url), timestamp: routedAt, attemptsStarted: 2 });
    expect(out).toMatchObject({ outcome: 'paused', attempts: 0, errorType: 'blocked_403' });
    expect(h.fetchCalls).toHaveLength(1);
    expect(h.attempts).toHaveLength(1);
    expect(h.routeJobs[1]!.input).toMatchObject({ linkId: second.id, generation: 1, reason: 'resume', nextFetcher: 'playwright_stealth', blockedFetcher: 'simple_http' });
    expect(h.links.rows.get(second.id)).toMatchObject({ status: 'paused', attemptCount: 0, lastErrorType: 'blocked_403' });
    // A first run is not looked up (the hot path): it makes its request.
    const fifth = h.links.add('https://burst.example/5', { status: 'fetching' });
    h.script(response(fifth.url, { html: STATIC_HTML }));
    expect(await proc({ ...job(fifth.id, fifth.url), timestamp: routedAt, attemptsStarted: 1 })).toMatchObject({ outcome: 'done' });
    expect(h.fetchCalls).toHaveLength(2);
    // A job that runs again after a politeness wait is looked up however young it is.
    const fourth = h.links.add('https://burst.example/4', { status: 'fetching' });
    memory.set('burst.example simple_http', { ...memory.get('burst.example simple_http')!, atMs: Date.now() });
    expect(await proc({ ...job(fourth.id, fourth.url), timestamp: Date.now() - 20, attemptsStarted: 2 })).toMatchObject({ outcome: 'paused', attempts: 0 });
    expect(h.fetchCalls).toHaveLength(2);
    // A job routed after the refusal is the router's informed choice: it makes its request.
    h.script(response(third.url, { html: STATIC_HTML }));
    expect(await proc({ ...job(third.id, third.url), timestamp: Date.now() + 1, attemptsStarted: 2 })).toMatchObject({ outcome: 'done' });
    expect(h.fetchCalls).toHaveLength(3);
  });

  it('re-routes a challenged browser link with the escalation to the stealth browser', async () => {
    const h = makeHarness();
    const link = h.links.add('https://walled.example/p', { status: 'fetching' });
    h.script(response(link.url, { status: 403, html: '<html><head><title>Just a moment...</title></head><body>Checking your browser before accessing walled.example. cf-chl</body></html>' }));
    await fetchProc(h)(fakeJob({ linkId: link.id, url: link.url, fetcher: 'playwright', selectionSource: 'learned' }, 'fetch-playwright'));
    expect(h.routeJobs[0]!.input).toMatchObject({ reason: 'resume', blockedFetcher: 'playwright', nextFetcher: 'playwright_stealth' });
  });

  it('logs the wall a browser got through with the attempt, and nothing for a page that met none', async () => {
    const h = makeHarness();
    const urls = ['https://walled.example/a', 'https://walled.example/b', 'https://walled.example/c'];
    const links = urls.map((u) => h.links.add(u, { status: 'fetching' }));
    // The wall is the first challenge the browser met (the one plain HTTP meets), not the last step before the page.
    const met = (firstVendor: string | null, vendor: string | null) => ({ vendor, kind: 'interstitial' as const, firstVendor, firstKind: 'interstitial' as const, cleared: true, waitedMs: 1200, documents: [{ url: urls[0]!, status: 503 }, { url: urls[0]!, status: 200 }] });
    h.script(
      response(urls[0]!, { html: STATIC_HTML, challenge: met('cloudflare', 'js_cookie_check') }),
      response(urls[1]!, { html: STATIC_HTML, challenge: met(null, null) }),
      response(urls[2]!, { html: STATIC_HTML }),
    );
    for (const link of links) await fetchProc(h)(fakeJob({ linkId: link.id, url: link.url, fetcher: 'playwright', selectionSource: 'learned' }, 'fetch-playwright'));
    const passed = h.attempts.map((a) => a.heuristics.filter((x) => x.type === 'challenge_passed').map((x) => x.value));
    expect(passed).toEqual([['cloudflare'], ['unknown'], []]);
    expect(h.attempts.every((a) => a.success)).toBe(true);
  });

  it('re-routes a rate-limited link to the same fetcher: stealth does not help against a pace limit', async () => {
    const h = makeHarness();
    const link = h.links.add('https://ratelimit.example/q', { status: 'fetching' });
    h.script(response(link.url, { status: 429, headers: { 'retry-after': '60', 'content-type': 'text/plain' }, contentType: 'text/plain', text: 'slow down' }));
    await fetchProc(h)(job(link.id, link.url));
    expect(h.routeJobs[0]!.input).toMatchObject({ nextFetcher: 'simple_http' });
    expect(h.routeJobs[0]!.input).not.toHaveProperty('blockedFetcher');
    expect(h.attempts[0]).toMatchObject({ errorType: 'rate_limited', isBanned: true, success: false });
    expect(h.pausedDomains).toHaveLength(1);
  });

  it('never ends a 429 pause before the Retry-After the site sent', async () => {
    const h = makeHarness();
    const link = h.links.add('https://ratelimit.example/', { status: 'fetching' });
    h.script(response(link.url, { status: 429, headers: { 'retry-after': '3600', 'content-type': 'text/plain' }, contentType: 'text/plain', text: 'slow down' }));
    await fetchProc(h)(job(link.id, link.url));
    const row = h.links.rows.get(link.id)!;
    expect(row.pausedUntil!.getTime() - h.clock.now().getTime()).toBe(3600_000);
    expect(h.attempts[0]?.responseHeaders).toMatchObject({ 'retry-after': '3600' });
  });

  it('sends an empty page from plain HTTP to playwright once, as a retry', async () => {
    const h = makeHarness();
    const link = h.links.add('https://empty.example/', { status: 'fetching' });
    h.script(response(link.url, { html: EMPTY_HTML }));
    const setbacks: string[] = [];
    const out = await fetchProc(h, { setbacks: { record: (d) => setbacks.push(d) } })(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'switched', errorType: 'wrong_tool' });
    expect(setbacks).toEqual(['empty.example']);
    expect(h.attempts[0]).toMatchObject({ success: false, errorType: 'wrong_tool', fetcher: 'simple_http' });
    expect(h.fetchJobs[0]).toMatchObject({ fetcher: 'playwright', selectionSource: 'retry', retryOf: { fetcher: 'simple_http', errorType: 'wrong_tool' } });
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'fetching', fetcher: 'playwright', selectionSource: 'retry' });
  });

  it('fails a page that stays empty in the browser with empty_content', async () => {
    const h = makeHarness();
    const link = h.links.add('https://empty.example/', { status: 'fetching', attemptCount: 1 });
    h.script(response(link.url, { html: EMPTY_HTML }));
    const out = await fetchProc(h)(fakeJob({ linkId: link.id, url: link.url, fetcher: 'playwright', selectionSource: 'retry' }, 'fetch-playwright'));
    expect(out).toMatchObject({ outcome: 'failed', errorType: 'empty_content' });
    expect(h.links.rows.get(link.id)?.status).toBe('failed');
  });

  it('waits for politeness as a delayed job, without an attempt', async () => {
    const h = makeHarness();
    const link = h.links.add('https://busy.example/', { status: 'fetching' });
    const j = job(link.id, link.url);
    const before = Date.now();
    const gate = { ...h.common.gate, acquire: async () => ({ granted: false as const, retryInMs: 1500, reason: 'delay' as const }) };
    await expect(fetchProc(h, { gate })(j)).rejects.toBeInstanceOf(DelayedError);
    expect(j.delayedTo[0]! - before).toBeGreaterThanOrEqual(1500);
    expect(h.attempts).toHaveLength(0);
    expect(h.fetchCalls).toHaveLength(0);
  });

  it('fails a robots-disallowed URL without a request', async () => {
    const h = makeHarness();
    const link = h.links.add('https://robots.example/private', { status: 'fetching' });
    const robots = { check: async () => ({ allowed: false, crawlDelayMs: null, reason: 'disallowed by robots.txt: /private' }) };
    const out = await fetchProc(h, { robots })(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'failed', errorType: 'robots_disallowed', attempts: 0 });
    expect(h.fetchCalls).toHaveLength(0);
  });

  it('fails a link whose address the SSRF guard refuses with that reason, not as a robots.txt verdict', async () => {
    const h = makeHarness();
    const link = h.links.add('http://10.0.0.5/admin', { status: 'fetching' });
    const robots = { check: async () => Promise.reject(new CrawlerError('blocked_address', '10.0.0.5 is a private address')) };
    const out = await fetchProc(h, { robots })(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'failed', errorType: 'blocked_address', attempts: 0 });
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'failed', lastErrorType: 'blocked_address', lastError: '10.0.0.5 is a private address' });
    expect(h.fetchCalls).toHaveLength(0);
  });

  it('fails a link whose certificate robots.txt\'s handshake refused, that handshake logged as its attempt', async () => {
    const h = makeHarness();
    const link = h.links.add('https://expired.example/a/page', { status: 'fetching' });
    const robots = { check: async () => Promise.reject(new CrawlerError('tls_error', 'CERT_HAS_EXPIRED: certificate has expired')) };
    const out = await fetchProc(h, { robots })(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'failed', errorType: 'tls_error', attempts: 1 });
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'failed', lastErrorType: 'tls_error', lastError: 'CERT_HAS_EXPIRED: certificate has expired', attemptCount: 1 });
    expect(h.attempts.map((a) => [a.fetcher, a.success, a.errorType, a.errorMessage])).toEqual([
      ['simple_http', false, 'tls_error', 'CERT_HAS_EXPIRED: certificate has expired (the handshake of robots.txt of https://expired.example, read before the page)'],
    ]);
    expect(h.attempts[0]!.heuristics).toContainEqual({ type: 'domain', value: 'expired.example' });
    expect(h.fetchCalls).toHaveLength(0);
  });

  it('lets an unexpected robots failure fail the job (BullMQ retries it) rather than the link', async () => {
    const h = makeHarness();
    const link = h.links.add('https://flaky.example/', { status: 'fetching' });
    const robots = { check: async () => Promise.reject(new Error('redis went away')) };
    await expect(fetchProc(h, { robots })(job(link.id, link.url))).rejects.toThrow(/redis went away/);
    expect(h.links.rows.get(link.id)?.status).toBe('fetching');
  });

  it('fails a link for good once it has used its attempts', async () => {
    const h = makeHarness();
    const link = h.links.add('https://tired.example/', { status: 'fetching', attemptCount: 4, lastErrorType: 'blocked_403' });
    const out = await fetchProc(h)(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'failed', errorType: 'blocked_403' });
    expect(h.links.rows.get(link.id)?.lastError).toBe('max_attempts:blocked_403');
  });

  it('fails a link routed to a fetcher that is not configured instead of crashing', async () => {
    const h = makeHarness();
    const link = h.links.add('https://x.example/', { status: 'fetching' });
    const out = await fetchProc(h)(fakeJob({ linkId: link.id, url: link.url, fetcher: 'archive_proxy', selectionSource: 'learned' }));
    expect(out).toMatchObject({ outcome: 'failed', errorType: 'unknown_fetcher' });
  });

  it('records a typed fetcher error code on the attempt', async () => {
    const h = makeHarness();
    const link = h.links.add('https://big.example/', { status: 'fetching' });
    h.script(new CrawlerError('too_large', 'body over limit'));
    const out = await fetchProc(h)(job(link.id, link.url));
    expect(out).toMatchObject({ outcome: 'failed', errorType: 'too_large' });
    expect(h.attempts[0]).toMatchObject({ errorType: 'too_large', success: false });
  });

  it('writes the outcome of a job once: every attempt it made, the link state and the page together', async () => {
    const h = makeHarness();
    const link = h.links.add('https://flaky.example/once', { status: 'fetching' });
    h.script(new CrawlerError('network_error', 'reset'), response(link.url, { html: STATIC_HTML }));
    await fetchProc(h)(job(link.id, link.url));
    expect(h.outcomes.writes).toHaveLength(1);
    const [w] = h.outcomes.writes;
    expect(w!.attempts.map((a) => a.success)).toEqual([false, true]);
    expect(w!.link).toMatchObject({ status: 'done', riskLevel: 0, pausedUntil: null, fetcher: 'simple_http' });
    expect(w!.page).toMatchObject({ linkId: link.id, httpStatus: 200 });
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'done', attemptCount: 2 });
  });

  it('writes nothing when the outcome write fails: the job throws and no attempt is counted', async () => {
    const h = makeHarness();
    const link = h.links.add('https://dbdown.example/', { status: 'fetching' });
    h.script(response(link.url, { html: STATIC_HTML }));
    const outcomes = { apply: async () => Promise.reject(new Error('Connection terminated unexpectedly')) };
    await expect(fetchProc(h, { outcomes })(job(link.id, link.url))).rejects.toThrow(/Connection terminated/);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'fetching', attemptCount: 0 });
  });

  it('a retry that meets the politeness gate writes its attempt before the job waits', async () => {
    const h = makeHarness();
    const link = h.links.add('https://slowgate.example/', { status: 'fetching' });
    h.script(new CrawlerError('timeout', 'too slow'));
    let calls = 0;
    const gate = {
      ...h.common.gate,
      acquire: async () =>
        calls++ === 0
          ? { granted: true as const, permit: { release: async () => {} } }
          : { granted: false as const, retryInMs: 30_000, reason: 'paused' as const },
    };
    await expect(fetchProc(h, { gate })(job(link.id, link.url))).rejects.toBeInstanceOf(DelayedError);
    expect(h.outcomes.writes).toHaveLength(1);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'paused', attemptCount: 1 });
    expect(h.links.rows.get(link.id)!.pausedUntil!.getTime() - h.clock.now().getTime()).toBe(30_000);
  });

  it('an immediate retry parked by the politeness gate is not granted again when the job runs on: the link pauses with backoff', async () => {
    // Before: each run of the job after a politeness wait took the failure for a first one and retried at once, so a
    // flaky site got MAX_ATTEMPTS requests a politeness delay apart and the link failed in seconds, never backing off.
    const h = makeHarness();
    const link = h.links.add('https://flaky-gate.example/', { status: 'fetching' });
    h.script(new CrawlerError('timeout', 'too slow'), new CrawlerError('timeout', 'still slow'));
    let calls = 0;
    const gate = {
      ...h.common.gate,
      acquire: async () =>
        calls++ === 1
          ? { granted: false as const, retryInMs: 1_000, reason: 'delay' as const }
          : { granted: true as const, permit: { release: async () => {} } },
    };
    const j = job(link.id, link.url);
    await expect(fetchProc(h, { gate })(j)).rejects.toBeInstanceOf(DelayedError);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'fetching', attemptCount: 1 });
    const out = await fetchProc(h, { gate })(j);
    expect(out).toMatchObject({ outcome: 'paused', errorType: 'timeout' });
    expect(h.fetchCalls).toHaveLength(2);
    expect(h.attempts.map((a) => a.selectionSource)).toEqual(['probe', 'retry']);
    expect(h.routeJobs).toHaveLength(1);
    expect(h.routeJobs[0]!.delayMs).toBe(5 * 60_000);
    expect(h.links.rows.get(link.id)).toMatchObject({ status: 'paused', attemptCount: 2 });
  });

  it('moves a paused link to the next generation with its delayed re-route', async () => {
    const h = makeHarness();
    const link = h.links.add('https://blocked.example/g', { status: 'fetching' });
    h.script(response(link.url, { status: 403, html: '<html><body>Forbidden</body></html>' }));
    await fetchProc(h)(job(link.id, link.url, { generation: 2 }));
    expect(h.outcomes.writes[0]!.link.generation).toBe(3);
    expect(h.routeJobs[0]!.input).toMatchObject({ generation: 3 });
  });

  it('logs a probe body it could not delete and still finishes the job', async () => {
    const h = makeHarness();
    const link = h.links.add('https://static.example/probe-left', { status: 'fetching' });
    await h.probeStore.save(link.id, { status: 200, headers: { 'content-type': 'text/html' }, finalUrl: link.url, contentType: 'text/html', body: new TextEncoder().encode(STATIC_HTML), text: STATIC_HTML });
    const warnings: string[] = [];
    const logger = recordingLogger(warnings);
    const probeStore = { ...h.probeStore, delete: async () => Promise.reject(new Error('redis went away')) };
    const out = await fetchProc(h, { probeStore, logger })(job(link.id, link.url, { probe: { key: `probe:${link.id}`, status: 200, bodyBytes: 10 } }));
    expect(out).toMatchObject({ outcome: 'done' });
    expect(warnings).toContain('could not delete the probe body');
  });
});

describe('fetch processor and generations', () => {
  it('skips a fetch job of an older generation than its link, without a request', async () => {
    const h = makeHarness();
    const link = h.links.add('https://stale.example/', { status: 'fetching', generation: 3 });
    const out = await fetchProc(h)(job(link.id, link.url, { generation: 2 }));
    expect(out).toMatchObject({ outcome: 'skipped', skipReason: 'stale_generation' });
    expect(h.fetchCalls).toHaveLength(0);
    expect(h.outcomes.writes).toHaveLength(0);
  });
});

/** A logger that keeps the messages of warn and error calls. */
function recordingLogger(into: string[]): Logger {
  const log: Logger = {
    ...silentLogger,
    child: () => log,
    warn: (...args: unknown[]) => void into.push(String(args.find((a) => typeof a === 'string'))),
    error: (...args: unknown[]) => void into.push(String(args.find((a) => typeof a === 'string'))),
  } as Logger;
  return log;
}

/**
 * WallStreaks in memory, with the Redis script's rules (wall-streaks.int.test.ts): a refusal of a request sent after
 * the last counted one adds up, the first top refusal's time stays.
 */
function memoryStreaks() {
  const map = new Map<string, WallStreak>();
  const countedAt = new Map<string, number>();
  return {
    map,
    note: async (domain: string, r: WallRefusal) => {
      const was = map.get(domain);
      const counts = !was || r.sentAtMs > (countedAt.get(domain) ?? -Infinity);
      if (counts) countedAt.set(domain, r.atMs);
      const next: WallStreak = { refusals: (was?.refusals ?? 0) + (counts ? 1 : 0), topSinceMs: was?.topSinceMs ?? (r.top ? r.atMs : null), errorType: r.errorType, reason: r.reason, fetcher: r.fetcher };
      map.set(domain, next);
      return next;
    },
    read: async (domain: string) => map.get(domain) ?? null,
    clear: async (domain: string) => {
      map.delete(domain);
      countedAt.delete(domain);
    },
  };
}
