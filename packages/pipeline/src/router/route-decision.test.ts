import { describe, expect, it } from 'vitest';
import { CrawlerError, type BestFetcherResult, type FetcherScore } from '@crawler/core';
import { response, SPA_HTML, STATIC_HTML } from '../__fixtures__/fakes.js';
import { decideRoute, type DecisionSettings, type RouteFacts, type RouteStep } from './route-decision.js';

// The router's choice as a table: every branch the processor and its old decideLearning took, from facts alone (no
// Redis, no Postgres). Each row is the facts the processor would have gathered and the step the decision takes.

const NOW = new Date('2026-05-01T12:00:00Z');
const MIN = 60_000;
const URL_ = 'https://shop.example/p/1';
const KNOWN = new Set(['simple_http', 'playwright', 'playwright_stealth']);
const SETTINGS: DecisionSettings = { learningModeEnabled: true, known: KNOWN, confidenceThreshold: 0.7, domainMemory: true, plainHttpMemoryMs: 0 };
const LINK = { id: 'l1', status: 'queued', pausedUntil: null, generation: 1, learningModeEnabled: null, riskLevel: 1, lastAttemptAt: null };
/** A link fetched before (a revisit), with conditional requests on. */
const VISITED = { ...LINK, lastAttemptAt: new Date('2026-04-01T00:00:00Z') };
const CONDITIONAL: DecisionSettings = { ...SETTINGS, conditionalRevisits: true };
/** The latest stored version: plain HTTP's, with an ETag. */
const VALIDATED = { fetcher: 'simple_http', etag: '"v1"', lastModified: null };
/** robots.txt could not be read; the cached answer expires in a minute. */
const UNREACHABLE = { allowed: false, reason: 'robots.txt unreachable (ECONNREFUSED)', unreachable: { retryAtMs: NOW.getTime() + 60_000 } };

function score(fetcher: string, confidence: number): FetcherScore {
  return { fetcher, sampleSize: 20, decayedSuccesses: 20 * confidence, successRate: confidence, sampleFactor: 1, confidence, eligible: true };
}
const NOTHING_LEARNED: BestFetcherResult = { best: null, scores: [] };
const CONFIDENT: BestFetcherResult = { best: score('playwright', 0.95), scores: [score('playwright', 0.95)] };
/** A .pdf: its suffix's pooled evidence (other sites, the seed priors) says plain HTTP. */
const PDF_PLAIN: BestFetcherResult = { best: score('simple_http', 0.95), scores: [score('simple_http', 0.95)] };
/** A probe of the domain met a challenge and chose the stealth browser. */
const STEALTH_WALL = { fetcher: 'playwright_stealth', reason: 'blocked_captcha' };
/** A section whose own pages all worked with plain HTTP. */
const STATIC_SECTION: BestFetcherResult = { best: score('simple_http', 0.9), scores: [score('simple_http', 0.9)] };
/** A blog page the domain's learned score sent to the browser, and an app page a probe showed needs one. */
const BLOG_BY_DOMAIN = { fetcher: 'playwright', success: true, isBanned: false, errorType: null, selectionSource: 'learned', attemptedAt: new Date(NOW.getTime() - MIN), section: 'shop.example/blog' };
const APP_PROBED = { ...BLOG_BY_DOMAIN, selectionSource: 'probe', attemptedAt: new Date(NOW.getTime() - 2 * MIN), section: 'shop.example/app' };
/** Facts up to the probe: nothing learned, no wall, robots allow, the gate grants. */
const TO_PROBE: Partial<RouteFacts> = { cached: null, learned: { learned: NOTHING_LEARNED, recent: [] }, wall: null, robots: { allowed: true }, gate: { granted: true } };

function facts(over: Partial<RouteFacts> = {}): RouteFacts {
  return { now: NOW, settings: SETTINGS, domain: 'shop.example', generation: 1, link: LINK, ...over };
}
const at = (ms: number) => new Date(NOW.getTime() + ms);

const cases: Array<[string, Partial<RouteFacts>, RouteStep | ((s: RouteStep) => void)]> = [
  // processRoute: what the link's row says before anything is chosen.
  ['a missing link is skipped', { link: null }, { kind: 'skip', reason: 'link_missing' }],
  ['a done link is skipped', { link: { ...LINK, status: 'done' } }, { kind: 'skip', reason: 'link_done' }],
  ['a failed link is skipped', { link: { ...LINK, status: 'failed' } }, { kind: 'skip', reason: 'link_failed' }],
  ['a job of an older generation is skipped', { link: { ...LINK, generation: 2 } }, { kind: 'skip', reason: 'stale_generation' }],
  ['a link paused into the future waits, and is marked paused', { link: { ...LINK, status: 'fetching', pausedUntil: at(5 * MIN) } },
    { kind: 'delay', delayMs: 5 * MIN, why: 'link_paused', effects: [{ kind: 'updateLink', change: { status: 'paused' } }] }],
  ['an already paused link only waits', { link: { ...LINK, status: 'paused', pausedUntil: at(MIN) } }, { kind: 'delay', delayMs: MIN, why: 'link_paused', effects: [] }],
  ['a pause that is over routes the link', { link: { ...LINK, status: 'paused', pausedUntil: at(-1) }, escalateTo: 'playwright' },
    { kind: 'route', decision: { fetcher: 'playwright', source: 'retry' }, effects: [] }],
  // Learning off: the legacy table, then DEFAULT_FETCHER, else no route.
  ['learning off asks the legacy table first', { settings: { ...SETTINGS, learningModeEnabled: false } }, { kind: 'need', what: 'legacyRoute' }],
  ['learning off: the legacy route', { settings: { ...SETTINGS, learningModeEnabled: false }, legacyRoute: 'playwright' },
    { kind: 'route', decision: { fetcher: 'playwright', source: 'hard_coded' }, effects: [] }],
  ['learning off for this link only (its own flag wins)', { link: { ...LINK, learningModeEnabled: false }, legacyRoute: null, settings: { ...SETTINGS, defaultFetcher: 'simple_http' } },
    { kind: 'route', decision: { fetcher: 'simple_http', source: 'default' }, effects: [] }],
  ['learning off, no route, no default: fails no_route', { settings: { ...SETTINGS, learningModeEnabled: false }, legacyRoute: null },
    { kind: 'fail', errorType: 'no_route', message: 'no route for domain shop.example and no DEFAULT_FETCHER configured' }],
  ['a route naming a fetcher the fleet does not run fails unknown_fetcher', { settings: { ...SETTINGS, learningModeEnabled: false }, legacyRoute: 'curl_impersonate' },
    (s) => expect(s).toMatchObject({ kind: 'fail', errorType: 'unknown_fetcher' })],
  // A fleet that runs no plain HTTP (FETCHERS=playwright,playwright_stealth): a choice of plain HTTP climbs to the
  // cheapest browser it runs instead of failing the link; a choice above every tool it runs still fails.
  ['a choice of a cheaper tool than the fleet runs climbs to its cheapest one above', { settings: { ...SETTINGS, known: new Set(['playwright', 'playwright_stealth']) }, cached: { fetcher: 'simple_http', source: 'learned', confidence: 0.9 } },
    { kind: 'route', decision: { fetcher: 'playwright', source: 'learned', confidence: 0.9 }, effects: [] }],
  ['a choice of a browser above every tool the fleet runs fails unknown_fetcher when it runs no browser', { settings: { ...SETTINGS, known: new Set(['simple_http']) }, cached: { fetcher: 'playwright_stealth', source: 'learned', confidence: 0.9 } },
    (s) => expect(s).toMatchObject({ kind: 'fail', errorType: 'unknown_fetcher' })],
  // FETCHERS=simple_http,playwright: a wall the probe met asks for the stealth browser; the browser the fleet runs may
  // clear it (and if it cannot, its own block says so), where failing the link would give up without a try.
  ['a choice of the stealth browser on a fleet without one goes to the strongest browser it runs', { settings: { ...SETTINGS, known: new Set(['simple_http', 'playwright']) }, cached: { fetcher: 'playwright_stealth', source: 'learned', confidence: 0.9 } },
    { kind: 'route', decision: { fetcher: 'playwright', source: 'learned', confidence: 0.9 }, effects: [] }],
  // Learning on: escalation, the decision cache, the learned step.
  ['a blocked link re-routes to the tool the retry policy chose', { escalateTo: 'playwright_stealth' },
    { kind: 'route', decision: { fetcher: 'playwright_stealth', source: 'retry' }, effects: [] }],
  ['an escalation to a fetcher the fleet does not run is ignored', { escalateTo: 'curl_impersonate' }, { kind: 'need', what: 'cached' }],
  ['the cache is asked before the store', {}, { kind: 'need', what: 'cached' }],
  ['a cached decision is taken as is', { cached: { fetcher: 'playwright', source: 'learned', confidence: 0.9 } },
    { kind: 'route', decision: { fetcher: 'playwright', source: 'learned', confidence: 0.9 }, effects: [] }],
  ['no cached decision: the store and the domain memory are read', { cached: null }, { kind: 'need', what: 'learned' }],
  ['a confident learned score decides, and is cached', { cached: null, learned: { learned: CONFIDENT, recent: [] } },
    { kind: 'route', decision: { fetcher: 'playwright', source: 'learned', confidence: 0.95 }, effects: [{ kind: 'cacheDecision', decision: { fetcher: 'playwright', source: 'learned', confidence: 0.95 } }] }],
  ['the domain memory decides when the pooled score does not (its latest working browser), and is cached', {
    cached: null,
    learned: { learned: NOTHING_LEARNED, recent: [{ fetcher: 'playwright_stealth', success: true, isBanned: false, errorType: null, selectionSource: 'probe', attemptedAt: at(-MIN) }] },
  }, (s) => expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright_stealth', source: 'domain_memory' }, effects: [{ kind: 'cacheDecision' }] })],
  // A section with the minimum sample of its own is judged on it, and remembered by its own attempts.
  ['a section with fewer attempts of its own than the minimum sample is judged by its domain', {
    cached: null, learned: { learned: CONFIDENT, recent: [], section: { section: 'shop.example/blog', attempts: 4, result: STATIC_SECTION } },
  }, (s) => expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright', source: 'learned' } })],
  ["a section's own confident score wins over the domain's", {
    cached: null, learned: { learned: CONFIDENT, recent: [], section: { section: 'shop.example/blog', attempts: 20, result: STATIC_SECTION } }, wall: null,
  }, (s) => expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'simple_http', source: 'learned' } })],
  ['a browser the section got only from the domain\'s score was never shown to be needed there: it is probed', {
    cached: null, learned: { learned: CONFIDENT, recent: [BLOG_BY_DOMAIN, APP_PROBED], section: { section: 'shop.example/blog', attempts: 5, result: { best: null, scores: [] } } },
  }, { kind: 'need', what: 'wall' }],
  ["the domain's memory of another section does not decide for a section judged on its own", {
    cached: null, learned: { learned: NOTHING_LEARNED, recent: [APP_PROBED], section: { section: 'shop.example/blog', attempts: 5, result: { best: null, scores: [] } } },
  }, { kind: 'need', what: 'wall' }],
  ['...while a section without its own sample still follows it', {
    cached: null, learned: { learned: NOTHING_LEARNED, recent: [APP_PROBED], section: { section: 'shop.example/blog', attempts: 4, result: { best: null, scores: [] } } },
  }, (s) => expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright', source: 'domain_memory' } })],
  ['the learned choice avoids the fetcher the link was just blocked with', { cached: null, avoid: 'playwright', learned: { learned: CONFIDENT, recent: [] } }, { kind: 'need', what: 'wall' }],
  // A file-like URL (a .pdf) the pooled evidence sends to plain HTTP (its suffix's successes on other sites, the seed
  // priors) on a domain whose probe just met a bot wall: plain HTTP would meet the same wall.
  ['a confident plain-HTTP choice asks the wall memory before it is taken', { cached: null, learned: { learned: PDF_PLAIN, recent: [] } }, { kind: 'need', what: 'wall' }],
  ['a wall a probe of the domain met sends a file plain HTTP was learned for to the probe\'s tool, uncached', { cached: null, learned: { learned: PDF_PLAIN, recent: [] }, wall: STEALTH_WALL },
    { kind: 'route', decision: { fetcher: 'playwright_stealth', source: 'domain_memory' }, effects: [] }],
  ['no wall seen: the learned plain-HTTP choice stands, and is cached', { cached: null, learned: { learned: PDF_PLAIN, recent: [] }, wall: null },
    { kind: 'route', decision: { fetcher: 'simple_http', source: 'learned', confidence: 0.95 }, effects: [{ kind: 'cacheDecision', decision: { fetcher: 'simple_http', source: 'learned', confidence: 0.95 } }] }],
  ['a plain-HTTP decision cached before the wall was seen goes to the probe\'s tool too', { cached: { fetcher: 'simple_http', source: 'learned', confidence: 0.95 }, wall: STEALTH_WALL },
    { kind: 'route', decision: { fetcher: 'playwright_stealth', source: 'domain_memory' }, effects: [] }],
  ['a wall naming the tool this link was just refused on leaves the learned choice', { cached: null, avoid: 'playwright_stealth', learned: { learned: PDF_PLAIN, recent: [] }, wall: STEALTH_WALL },
    (s) => expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'simple_http', source: 'learned' } })],
  ['a learned browser choice does not read the wall memory', { cached: null, learned: { learned: CONFIDENT, recent: [] } }, (s) => expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright' } })],
  // No learned answer: the wall memory, then robots and the gate before a probe.
  ['a wall a probe of the domain met sends the page to that tool, without a probe', { ...TO_PROBE, wall: { fetcher: 'playwright_stealth', reason: 'blocked_captcha' }, robots: undefined, gate: undefined },
    { kind: 'route', decision: { fetcher: 'playwright_stealth', source: 'domain_memory' }, effects: [] }],
  ['a wall pointing at the avoided fetcher is ignored', { ...TO_PROBE, avoid: 'playwright', wall: { fetcher: 'playwright', reason: 'blocked_403' }, robots: undefined }, { kind: 'need', what: 'robots' }],
  ['a wall pointing at a fetcher the fleet does not run is ignored', { ...TO_PROBE, wall: { fetcher: 'curl_impersonate', reason: 'blocked_403' }, robots: undefined }, { kind: 'need', what: 'robots' }],
  ['a URL the policy refuses fails with its code', { ...TO_PROBE, robots: { refused: { code: 'blocked_address', message: 'private' } } }, { kind: 'fail', errorType: 'blocked_address', message: 'private' }],
  ['robots.txt disallows: robots_disallowed', { ...TO_PROBE, robots: { allowed: false, reason: 'Disallow: /p/' } }, { kind: 'fail', errorType: 'robots_disallowed', message: 'Disallow: /p/' }],
  // robots.txt unreachable: "not now", with backoff, and site_unreachable only when the link's check budget is used.
  ['robots.txt unreachable: the link paused (base × 2^risk), not its domain, risk level up, the reason on the link', {
    ...TO_PROBE, settings: { ...SETTINGS, pause: { unreachableBasePauseMs: MIN } }, robots: UNREACHABLE, gate: undefined,
  }, {
    kind: 'delay', delayMs: 2 * MIN, why: 'site_unreachable', effects: [
      { kind: 'updateLink', change: { status: 'paused', pausedUntil: at(2 * MIN), riskLevel: 2, lastErrorType: 'site_unreachable', lastError: 'robots.txt unreachable (ECONNREFUSED)' } },
    ],
  }],
  ['robots.txt unreachable: the pause is capped by PAUSE_MAX_MS but never ends before the cached answer expires', {
    ...TO_PROBE, link: { ...LINK, riskLevel: 4 }, settings: { ...SETTINGS, pause: { unreachableBasePauseMs: MIN }, pauseMaxMs: 30_000 }, robots: UNREACHABLE,
  }, (s) => expect(s).toMatchObject({ kind: 'delay', delayMs: 60_000, why: 'site_unreachable', effects: [{ kind: 'updateLink', change: { pausedUntil: at(60_000), riskLevel: 5 } }] })],
  ['robots.txt unreachable on the last check of the budget: fails site_unreachable', { ...TO_PROBE, link: { ...LINK, riskLevel: 2 }, settings: { ...SETTINGS, maxAttempts: 3 }, robots: UNREACHABLE },
    { kind: 'fail', errorType: 'site_unreachable', message: 'site unreachable on 3 checks in a row (robots.txt unreachable (ECONNREFUSED)); re-post the link to try again' }],
  ['robots.txt unreachable one check before the budget ends: still a pause', { ...TO_PROBE, link: { ...LINK, riskLevel: 1 }, settings: { ...SETTINGS, maxAttempts: 3 }, robots: UNREACHABLE },
    (s) => expect(s).toMatchObject({ kind: 'delay', why: 'site_unreachable' })],
  // robots.txt only a browser can read (a head undici refuses, a wall's page in its place).
  ['robots.txt behind a wall: the link goes to the browser named, whose fetch reads robots.txt first', { ...TO_PROBE, robots: { allowed: false, reason: 'wall', browser: { fetcher: 'playwright_stealth', retryAtMs: NOW.getTime() + MIN, status: 403 } } },
    (s) => expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright_stealth', source: 'probe' } })],
  ['robots.txt behind a 403 wall and no browser in the fleet: the 403 holds no rules, so the gate is asked as before browsers read it', {
    ...TO_PROBE, gate: undefined, settings: { ...SETTINGS, known: new Set(['simple_http']) }, robots: { allowed: false, reason: 'wall', browser: { fetcher: 'playwright_stealth', retryAtMs: NOW.getTime() + MIN, status: 403 } },
  }, { kind: 'need', what: 'gate' }],
  ['robots.txt with a head undici refuses and no browser in the fleet: nothing readable, an outage', {
    ...TO_PROBE, settings: { ...SETTINGS, known: new Set(['simple_http']) }, robots: { allowed: false, reason: 'bare LF', browser: { fetcher: 'playwright', retryAtMs: NOW.getTime() + MIN } },
  }, (s) => expect(s).toMatchObject({ kind: 'delay', why: 'site_unreachable' })],
  ['robots.txt behind a 503 wall and no browser in the fleet: an outage', {
    ...TO_PROBE, settings: { ...SETTINGS, known: new Set(['simple_http']) }, robots: { allowed: false, reason: 'wall', browser: { fetcher: 'playwright_stealth', retryAtMs: NOW.getTime() + MIN, status: 503 } },
  }, (s) => expect(s).toMatchObject({ kind: 'delay', why: 'site_unreachable' })],
  ['robots allows: the gate is asked', { ...TO_PROBE, gate: undefined }, { kind: 'need', what: 'gate' }],
  ['the domain is paused: the pause\'s reason is asked for', { ...TO_PROBE, gate: { granted: false, reason: 'paused', retryInMs: 3 * MIN } }, { kind: 'need', what: 'pauseReason' }],
  ['the domain is paused: the link is paused until then with the domain\'s pause reason, and the job waits', {
    ...TO_PROBE, gate: { granted: false, reason: 'paused', retryInMs: 3 * MIN },
    pauseReason: { lastErrorType: 'site_unreachable', lastError: 'domain shop.example paused (site_unreachable) until 2026-05-01T12:03:00.000Z' },
  }, {
    kind: 'delay', delayMs: 3 * MIN, why: 'politeness', effects: [{
      kind: 'updateLink',
      change: { status: 'paused', pausedUntil: at(3 * MIN), lastErrorType: 'site_unreachable', lastError: 'domain shop.example paused (site_unreachable) until 2026-05-01T12:03:00.000Z' },
    }],
  }],
  ['the domain is paused but the gate cannot say why: the link is paused without an error', { ...TO_PROBE, gate: { granted: false, reason: 'paused', retryInMs: 3 * MIN }, pauseReason: {} },
    { kind: 'delay', delayMs: 3 * MIN, why: 'politeness', effects: [{ kind: 'updateLink', change: { status: 'paused', pausedUntil: at(3 * MIN) } }] }],
  ['the domain is paused by a wall that refused the strongest tool, its wait spent: the link fails with the wall\'s error', {
    ...TO_PROBE, gate: { granted: false, reason: 'paused', retryInMs: 3 * MIN },
    pauseReason: { lastErrorType: 'blocked_captcha', lastError: 'domain shop.example paused', wall: { kind: 'fail', errorType: 'blocked_captcha', message: 'blocked_captcha:cloudflare: the site\'s wall refused every tool' } },
  }, { kind: 'fail', errorType: 'blocked_captcha', message: 'blocked_captcha:cloudflare: the site\'s wall refused every tool' }],
  ['the domain is paused by such a wall, its wait not spent: the link waits no longer than its budget', {
    ...TO_PROBE, gate: { granted: false, reason: 'paused', retryInMs: 3 * MIN },
    pauseReason: { lastErrorType: 'blocked_captcha', lastError: 'paused', wall: { kind: 'wait', untilMs: NOW.getTime() + MIN } },
  }, { kind: 'delay', delayMs: MIN, why: 'politeness', effects: [{ kind: 'updateLink', change: { status: 'paused', pausedUntil: at(MIN), lastErrorType: 'blocked_captcha', lastError: 'paused' } }] }],
  ['the domain is busy: the job only waits', { ...TO_PROBE, gate: { granted: false, reason: 'concurrency', retryInMs: 500 } }, { kind: 'delay', delayMs: 500, why: 'politeness', effects: [] }],
  ['the gate grants: probe', TO_PROBE, { kind: 'need', what: 'probe' }],
  // A revisit: the stored version's conditional request replaces the probe (after the learned step and the wall memory).
  ['a revisit asks for the stored validators after the wall memory', { ...TO_PROBE, link: VISITED, settings: CONDITIONAL, robots: undefined, gate: undefined }, { kind: 'need', what: 'revisit' }],
  ['a revisit of a page plain HTTP stored with an ETag goes to plain HTTP, source revisit, without a probe', { ...TO_PROBE, link: VISITED, settings: CONDITIONAL, revisit: VALIDATED, robots: undefined, gate: undefined },
    { kind: 'route', decision: { fetcher: 'simple_http', source: 'revisit' }, effects: [] }],
  ['a Last-Modified is a validator too (and a direct_access name is plain HTTP)', { ...TO_PROBE, link: VISITED, settings: CONDITIONAL, revisit: { fetcher: 'direct_access', etag: null, lastModified: 'Wed, 01 Apr 2026 00:00:00 GMT' } },
    { kind: 'route', decision: { fetcher: 'simple_http', source: 'revisit' }, effects: [] }],
  ['conditional requests off (CONDITIONAL_REQUESTS=false): no validators read, the probe path', { ...TO_PROBE, link: VISITED, robots: undefined }, { kind: 'need', what: 'robots' }],
  ['a first visit reads no validators', { ...TO_PROBE, settings: CONDITIONAL, robots: undefined }, { kind: 'need', what: 'robots' }],
  ['a stored version without a validator: nothing to ask with, the probe path', { ...TO_PROBE, link: VISITED, settings: CONDITIONAL, revisit: { fetcher: 'simple_http', etag: null, lastModified: null } },
    { kind: 'need', what: 'probe' }],
  ['no stored version: the probe path', { ...TO_PROBE, link: VISITED, settings: CONDITIONAL, revisit: null }, { kind: 'need', what: 'probe' }],
  ['a version a browser rendered: its validators do not describe plain HTTP\'s page, the probe path', { ...TO_PROBE, link: VISITED, settings: CONDITIONAL, revisit: { ...VALIDATED, fetcher: 'playwright' } },
    { kind: 'need', what: 'probe' }],
  ['a revisit of a link just blocked with plain HTTP is not sent back to it', { ...TO_PROBE, link: VISITED, settings: CONDITIONAL, avoid: 'simple_http', robots: undefined }, { kind: 'need', what: 'robots' }],
  ['a fleet without plain HTTP does not revisit conditionally', { ...TO_PROBE, link: VISITED, settings: { ...CONDITIONAL, known: new Set(['playwright']) }, robots: undefined }, { kind: 'need', what: 'robots' }],
  ['the wall memory wins over the revisit step', { ...TO_PROBE, link: VISITED, settings: CONDITIONAL, wall: { fetcher: 'playwright_stealth', reason: 'blocked_captcha' }, revisit: VALIDATED },
    { kind: 'route', decision: { fetcher: 'playwright_stealth', source: 'domain_memory' }, effects: [] }],
  ['a confident learned choice wins over the revisit step', { cached: null, link: VISITED, settings: CONDITIONAL, learned: { learned: CONFIDENT, recent: [] }, revisit: VALIDATED },
    (s) => expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright', source: 'learned' } })],
  // The job's priority goes on to the fetch job, whatever decided (but never into the cached decision).
  ['a route carries the job\'s priority', { escalateTo: 'playwright', priority: 3 }, { kind: 'route', decision: { fetcher: 'playwright', source: 'retry' }, effects: [], priority: 3 }],
  ['a learned route carries it too, outside the decision it caches', { cached: null, learned: { learned: CONFIDENT, recent: [] }, priority: 1 }, {
    kind: 'route', decision: { fetcher: 'playwright', source: 'learned', confidence: 0.95 }, effects: [{ kind: 'cacheDecision', decision: { fetcher: 'playwright', source: 'learned', confidence: 0.95 } }], priority: 1,
  }],
  ['a probe route carries it too', { ...TO_PROBE, priority: 7, probe: { response: response(URL_, { html: STATIC_HTML }), answeredAt: NOW } },
    (s) => expect(s).toMatchObject({ kind: 'route', decision: { source: 'probe' }, priority: 7 })],
  ['a job without a priority routes without one', { escalateTo: 'playwright' }, (s) => expect(s).not.toHaveProperty('priority')],
  // The probe's classification.
  ['a static page: plain HTTP, and its body is kept for the fetch', { ...TO_PROBE, probe: { response: response(URL_, { html: STATIC_HTML }), answeredAt: NOW } },
    { kind: 'route', decision: { fetcher: 'simple_http', source: 'probe' }, effects: [{ kind: 'saveProbe' }], probe: 'stored' }],
  ['an SPA shell: a browser, the body discarded', { ...TO_PROBE, probe: { response: response(URL_, { html: SPA_HTML }), answeredAt: NOW } },
    (s) => expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright', source: 'probe' }, effects: [], probe: 'discarded' })],
  ['a 403 wall: the sighting is recorded and a browser chosen', { ...TO_PROBE, probe: { response: response(URL_, { status: 403, html: '<html><body>Forbidden</body></html>' }), answeredAt: NOW } },
    (s) => {
      expect(s).toMatchObject({ kind: 'route', decision: { source: 'probe' }, probe: 'discarded' });
      const wall = (s as Extract<RouteStep, { kind: 'route' }>).effects[0];
      expect(wall).toMatchObject({ kind: 'recordWall', reason: 'blocked_403' });
      expect(wall && 'fetcher' in wall ? wall.fetcher : null).toBe((s as Extract<RouteStep, { kind: 'route' }>).decision.fetcher);
    }],
  ['a failed probe: the probe verdict for errors, nothing stored', { ...TO_PROBE, probe: { error: new CrawlerError('timeout', 'probe timed out'), answeredAt: NOW } },
    (s) => expect(s).toMatchObject({ kind: 'route', decision: { source: 'probe' }, effects: [], probe: 'failed' })],
  ['a rate-limited probe: domain and link paused for Retry-After (from the answer), risk level up', {
    ...TO_PROBE,
    probe: { response: response(URL_, { status: 429, headers: { 'content-type': 'text/html', 'retry-after': '7200' }, html: '<h1>Too Many Requests</h1>' }), answeredAt: at(MIN) },
  }, {
    kind: 'delay', delayMs: 7_200_000, why: 'probe_rate_limited', effects: [
      { kind: 'pauseDomain', until: at(MIN + 7_200_000), reason: 'rate_limited' },
      { kind: 'updateLink', change: { status: 'paused', pausedUntil: at(MIN + 7_200_000), riskLevel: 2, lastErrorType: 'rate_limited', lastError: 'rate_limited: probe answered 429' } },
    ],
  }],
  ['a rate-limited probe without Retry-After: the block table, capped', {
    ...TO_PROBE, settings: { ...SETTINGS, pauseMaxMs: 5_000 },
    probe: { response: response(URL_, { status: 429, html: '<p>slow down</p>' }), answeredAt: NOW },
  }, (s) => expect(s).toMatchObject({ kind: 'delay', delayMs: 5_000, why: 'probe_rate_limited' })],
  ['a rate-limited probe with Retry-After: 0 waits the RATE_LIMIT_MIN_PAUSE_MS floor', {
    ...TO_PROBE, settings: { ...SETTINGS, pause: { rateLimitMinPauseMs: 4_000 } },
    probe: { response: response(URL_, { status: 429, headers: { 'content-type': 'text/html', 'retry-after': '0' }, html: '<p>slow down</p>' }), answeredAt: NOW },
  }, (s) => expect(s).toMatchObject({ kind: 'delay', delayMs: 4_000, why: 'probe_rate_limited', effects: [{ kind: 'pauseDomain', until: at(4_000) }, { kind: 'updateLink', change: { pausedUntil: at(4_000) } }] })],
];

describe('decideRoute', () => {
  it.each(cases)('%s', (_name, over, expected) => {
    const step = decideRoute(facts(over));
    if (typeof expected === 'function') expected(step);
    else expect(step).toEqual(expected);
  });
});
