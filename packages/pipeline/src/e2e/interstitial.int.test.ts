/**
 * A walled site end to end on real Redis and Postgres, in learning mode with every fetcher configured: every page of
 * the site answers a visitor without clearance (browsers included) with a cookie-and-reload interstitial, as the
 * web's "Just a moment…" pages do. The stealth browser waits it out once; the clearance cookie stays in the site's
 * browser context, so the site's other pages pass without a challenge.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSimWeb, type SimWeb } from '@crawler/sim-web';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let web: SimWeb | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await web?.close();
  crawler = undefined;
  web = undefined;
});

const PAGES = 20;

describe('end to end: a site behind an interstitial that clears itself', () => {
  it('ends with every link done by playwright_stealth, status 200 and the real content, one challenge for the first page', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', challengeDelayMs: 300, name: 'walled' }], firstHost: '127.0.6.40' });
    const site = web.sites[0]!;
    crawler = await startE2e('interstitial', { CHALLENGE_WAIT_MS: '10000', FETCH_TIMEOUT_MS: '30000' });
    const urls = site.urls(PAGES);
    const { accepted } = await crawler.runtime.enqueue(urls);
    crawler.runtime.startWorkers();
    await waitFor(async () => (await crawler!.db.prisma.link.count({ where: { status: { in: ['done', 'failed'] } } })) === PAGES, 'every link settled', 240_000);

    const links = await crawler.db.prisma.link.findMany({ where: { id: { in: accepted.map((a) => a.linkId) } }, include: { attempts: { orderBy: { id: 'asc' } } } });
    expect(links.map((l) => [l.status, l.fetcher])).toEqual(links.map(() => ['done', 'playwright_stealth']));
    for (const link of links) {
      // The attempt that finished the link: the stealth browser, the content's own 200 (not the wall's 503).
      expect(link.attempts.at(-1)).toMatchObject({ fetcher: 'playwright_stealth', success: true, httpStatus: 200, errorType: null });
      // The interstitial was waited out, never recorded as a block (a fetch slowed by the machine may be retried).
      expect(link.attempts.filter((a) => a.errorType?.startsWith('blocked'))).toEqual([]);
      const stored = await crawler.content.latestForLink(link.id);
      const text = new TextDecoder().decode(stored!.body);
      expect(text).toContain(`<h1>walled page ${/(\d+)$/.exec(link.url)![1]}</h1>`);
      expect(text).not.toContain('Checking your browser');
    }

    // The site's own count. The browser met the interstitial once, on the first page it asked for, then came back
    // to that page with the clearance cookie; every later page of the domain was served at once.
    const browser = site.requestLog().filter((r) => r.client === 'browser');
    expect(browser.filter((r) => r.outcome === 'challenge').map((r) => r.path)).toEqual([browser[0]!.path]);
    expect(browser.slice(1).every((r) => r.outcome === 'served')).toBe(true);
    expect(new Set(browser.filter((r) => r.outcome === 'served').map((r) => r.path))).toEqual(new Set(urls.map((u) => new URL(u).pathname)));
    // The attempt log says so too: the one browser attempt that got through the wall carries `challenge_passed`.
    const passed = await crawler.db.prisma.attemptHeuristic.findMany({ where: { heuristicType: 'challenge_passed' }, include: { attempt: true } });
    expect(passed.map((h) => [new URL(h.attempt.url).pathname, h.attempt.success])).toEqual([[browser[0]!.path, true]]);
    // Plain HTTP only probed, and only until a probe met the wall: the router then sent the domain's other pages to
    // the probe's tool without probing them (ProbeWalls). Only probes already in flight together met it too.
    const plain = site.requestLog().filter((r) => r.client === 'plain');
    console.log(`interstitial e2e: ${plain.length} plain-HTTP probes of ${PAGES} pages`);
    expect(plain.length).toBeGreaterThanOrEqual(1);
    expect(plain.length).toBeLessThan(PAGES / 2);
    expect(plain.every((r) => r.outcome === 'challenge')).toBe(true);
  }, 300_000);

  it('gets through a wall of a family no detector knows: every link done by a browser, the wall logged as unknown', async () => {
    // The same cookie-and-reload wall, but worded and scripted so that no signature matches it: only its 503 and its
    // page of nothing but script give it away, as a vendor we have not met would.
    web = await startSimWeb({ sites: [{ kind: 'interstitial', challengeDelayMs: 300, name: 'unknown', unknownWallFamily: true }], firstHost: '127.0.6.50' });
    const site = web.sites[0]!;
    crawler = await startE2e('unknown-wall', { CHALLENGE_WAIT_MS: '10000', FETCH_TIMEOUT_MS: '30000' });
    const pages = 8;
    const { accepted } = await crawler.runtime.enqueue(site.urls(pages));
    crawler.runtime.startWorkers();
    await waitFor(async () => (await crawler!.db.prisma.link.count({ where: { status: { in: ['done', 'failed'] } } })) === pages, 'every link settled', 240_000);

    const links = await crawler.db.prisma.link.findMany({ where: { id: { in: accepted.map((a) => a.linkId) } } });
    expect(links.map((l) => l.status)).toEqual(links.map(() => 'done'));
    expect(links.every((l) => l.fetcher === 'playwright' || l.fetcher === 'playwright_stealth')).toBe(true);
    for (const link of links) {
      const text = new TextDecoder().decode((await crawler.content.latestForLink(link.id))!.body);
      expect(text).toContain(`<h1>unknown page ${/(\d+)$/.exec(link.url)![1]}</h1>`);
    }
    const passed = await crawler.db.prisma.attemptHeuristic.findMany({ where: { heuristicType: 'challenge_passed' } });
    expect(passed.length).toBeGreaterThanOrEqual(1);
    expect(new Set(passed.map((h) => h.heuristicValue))).toEqual(new Set(['unknown']));
    // Plain HTTP met the wall and was not taken for a server in trouble: it only probed.
    const plain = site.requestLog().filter((r) => r.client === 'plain');
    expect(plain.every((r) => r.outcome === 'challenge')).toBe(true);
    expect(plain.length).toBeLessThan(pages);
  }, 300_000);

  it('gets through an Anubis-style proof-of-work page served with 200: no link keeps the challenge as its content', async () => {
    // The wall answers 200 with a page of about 900 characters of explanation, and its script does SHA-256 work before
    // it passes through a redirecting endpoint that sets the cookie: plain HTTP can only ever read the challenge.
    web = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'anubis', challengeDelayMs: 300, name: 'forge' }], firstHost: '127.0.6.60' });
    const site = web.sites[0]!;
    crawler = await startE2e('anubis-wall', { CHALLENGE_WAIT_MS: '10000', FETCH_TIMEOUT_MS: '30000' });
    const pages = 6;
    const { accepted } = await crawler.runtime.enqueue(site.urls(pages));
    crawler.runtime.startWorkers();
    await waitFor(async () => (await crawler!.db.prisma.link.count({ where: { status: { in: ['done', 'failed'] } } })) === pages, 'every link settled', 240_000);

    const links = await crawler.db.prisma.link.findMany({ where: { id: { in: accepted.map((a) => a.linkId) } }, include: { attempts: { orderBy: { id: 'asc' } } } });
    expect(links.map((l) => l.status)).toEqual(links.map(() => 'done'));
    expect(links.every((l) => l.fetcher === 'playwright' || l.fetcher === 'playwright_stealth')).toBe(true);
    for (const link of links) {
      const text = new TextDecoder().decode((await crawler.content.latestForLink(link.id))!.body);
      expect(text).toContain(`<h1>forge page ${/(\d+)$/.exec(link.url)![1]}</h1>`);
      expect(text).not.toContain('not a bot');
      // Plain HTTP met the challenge and said so: no plain attempt counts as a success.
      expect(link.attempts.filter((a) => a.fetcher === 'simple_http' && a.success)).toEqual([]);
    }
    const passed = await crawler.db.prisma.attemptHeuristic.findMany({ where: { heuristicType: 'challenge_passed' } });
    expect(passed.length).toBeGreaterThanOrEqual(1);
    expect(new Set(passed.map((h) => h.heuristicValue))).toEqual(new Set(['anubis']));
    expect(site.requestLog().filter((r) => r.client === 'plain').every((r) => r.outcome === 'challenge')).toBe(true);
  }, 300_000);
});
