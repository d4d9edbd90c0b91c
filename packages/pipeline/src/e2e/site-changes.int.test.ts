/**
 * Learning across visits, end to end: a site that served plain static pages at the first visit has turned into a
 * JavaScript app (an SPA shell that only a browser renders) by the second, and is back to server-rendered pages by
 * the third, a month later. Each pass revisits every page (VersionStore.reopenForRevisit, as a refresh does), one
 * page after another as a site's pages come due; the crawler's clock and the site's are one ManualClock, so the
 * month passes in a line. A revisit's attempts are ordinary evidence: the router must follow the site both ways
 * after at most a few pages.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock } from '@crawler/core';
import { VersionStore } from '@crawler/db';
import { startSimWeb, type SimWeb } from '@crawler/sim-web';
import { startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let web: SimWeb | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await web?.close();
  crawler = undefined;
  web = undefined;
});

const PAGES = 8;

/**
 * Run until the page is done. A block pauses the link (and the domain) on the crawler's clock: the clock is moved past
 * the pause and the delayed re-route promoted by hand, as a real pause would end by itself.
 */
async function settle(c: E2eCrawler, clock: ManualClock, url: string): Promise<void> {
  // A pass may pause the domain more than once (a block, then a browser that timed out on a loaded machine): each
  // round moves the clock past the pause. The attempts the test then checks say whether the pauses were right.
  for (let round = 0; round < 12; round++) {
    await c.runtime.waitUntilIdle();
    const link = await c.db.prisma.link.findUniqueOrThrow({ where: { url } });
    if (link.status !== 'paused' || !link.pausedUntil) return;
    clock.set(link.pausedUntil.getTime() + 1_000);
    for (const name of c.runtime.queueNames()) for (const job of await c.runtime.queues.queue(name).getJobs(['delayed'])) await job.promote();
  }
}
/** Pages of a pass that may still go to the tool of the previous pass before the router follows the site. */
const AT_MOST = 2;

describe('end to end: a site that changes between visits', () => {
  it('static, then an SPA, then static again: each pass is routed to the right tool after at most a few pages', async () => {
    const t0 = Date.parse('2026-06-01T00:00:00Z');
    const clock = new ManualClock(t0);
    web = await startSimWeb({
      sites: [{ kind: 'static', name: 'shifting', changes: [{ kind: 'spa', atMs: t0 + DAY_MS }, { kind: 'static', atMs: t0 + 40 * DAY_MS }] }],
      firstHost: '127.0.7.60',
      clock,
    });
    const site = web.sites[0]!;
    crawler = await startE2e('site_changes', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:1,playwright:1', FETCH_TIMEOUT_MS: '30000' }, { clock });
    const prisma = crawler.db.prisma;
    const versions = new VersionStore({ prisma, clock });
    const urls = site.urls(PAGES);
    crawler.runtime.startWorkers();

    /** Visit every page once, in order, each after the previous one settled; the fetchers of each page's attempts. */
    const pass = async (first: boolean): Promise<string[][]> => {
      const out: string[][] = [];
      for (const url of urls) {
        clock.advance(60_000);
        if (first) {
          await crawler!.runtime.enqueue([url]);
        } else {
          const link = await prisma.link.findUniqueOrThrow({ where: { url } });
          const [reopened] = await versions.reopenForRevisit([link.id]);
          await crawler!.runtime.queues.enqueueRoute({ linkId: reopened!.id, url, generation: reopened!.generation });
        }
        const before = await prisma.fetcherAttempt.count({ where: { url } });
        await settle(crawler!, clock, url);
        const link = await prisma.link.findUniqueOrThrow({ where: { url }, include: { attempts: { orderBy: { id: 'asc' } } } });
        expect(link.status, `${url}: ${JSON.stringify(link.attempts.map((a) => [a.fetcher, a.success, a.errorType]))}`).toBe('done');
        out.push(link.attempts.slice(before).map((a) => `${a.fetcher}:${a.success ? 'ok' : a.errorType}`));
      }
      return out;
    };

    const one = await pass(true);
    expect(site.kind).toBe('static');
    expect(one.every((a) => a.length === 1 && a[0] === 'simple_http:ok')).toBe(true);

    clock.set(t0 + DAY_MS + 60_000);
    const two = await pass(false);
    expect(site.kind).toBe('spa');
    console.log('site changes e2e, pass 2 (SPA):', JSON.stringify(two));
    // Plain HTTP meets the shell on the first pages only; from then on the browser is chosen directly.
    const plainInTwo = two.filter((a) => a.some((x) => x.startsWith('simple_http'))).length;
    expect(plainInTwo).toBeGreaterThanOrEqual(1);
    expect(plainInTwo).toBeLessThanOrEqual(AT_MOST);
    expect(two.slice(AT_MOST)).toEqual(two.slice(AT_MOST).map(() => ['playwright:ok']));
    // Every page came back rendered by the browser: a new version with the app's content, and a link.changed event.
    const rendered = site.requestLog().filter((r) => r.kind === 'spa' && r.outcome === 'served' && r.client === 'browser');
    expect(new Set(rendered.map((r) => r.path)).size).toBe(PAGES);
    expect(await prisma.linkEvent.count({ where: { type: 'link.changed' } })).toBe(PAGES);

    clock.set(t0 + 40 * DAY_MS + 60_000);
    const three = await pass(false);
    expect(site.kind).toBe('static');
    console.log('site changes e2e, pass 3 (static again):', JSON.stringify(three));
    // The browser's choice is checked again (the cheap probe) and plain HTTP wins back the domain.
    const browserInThree = three.filter((a) => a.some((x) => x.startsWith('playwright'))).length;
    expect(browserInThree).toBeLessThanOrEqual(AT_MOST);
    expect(three.slice(AT_MOST)).toEqual(three.slice(AT_MOST).map(() => ['simple_http:ok']));
    const last = await prisma.link.findUniqueOrThrow({ where: { url: urls.at(-1)! } });
    expect(last.fetcher).toBe('simple_http');
    // The flip back started with fresh evidence: the first page of the pass was probed, not routed from memory.
    const firstOfThree = await prisma.fetcherAttempt.findFirstOrThrow({ where: { url: urls[0]!, attemptedAt: { gte: new Date(t0 + 40 * DAY_MS) } }, orderBy: { id: 'asc' } });
    expect(firstOfThree.selectionSource).toBe('probe');
  }, 300_000);

  it('static, then a bot wall only the stealth browser passes, then static again: the wall costs one blocked request, the flip back one probe', async () => {
    const t0 = Date.parse('2026-06-01T00:00:00Z');
    const clock = new ManualClock(t0);
    // The stealth browser's choice is checked again after 60 days (core REVERIFY_AFTER_DAYS): the wall comes down after 70.
    web = await startSimWeb({
      sites: [{ kind: 'static', name: 'walled', challengeDelayMs: 300, changes: [{ kind: 'botwall', atMs: t0 + DAY_MS }, { kind: 'static', atMs: t0 + 70 * DAY_MS }] }],
      firstHost: '127.0.7.70',
      clock,
    });
    const site = web.sites[0]!;
    crawler = await startE2e('site_wall', {
      ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:1,playwright:1,playwright_stealth:1', FETCH_TIMEOUT_MS: '30000', CHALLENGE_WAIT_MS: '10000',
    }, { clock });
    const prisma = crawler.db.prisma;
    const versions = new VersionStore({ prisma, clock });
    const urls = site.urls(PAGES);
    crawler.runtime.startWorkers();
    const pass = async (first: boolean): Promise<string[][]> => {
      const out: string[][] = [];
      for (const url of urls) {
        clock.advance(60_000);
        if (first) await crawler!.runtime.enqueue([url]);
        else {
          const [reopened] = await versions.reopenForRevisit([(await prisma.link.findUniqueOrThrow({ where: { url } })).id]);
          await crawler!.runtime.queues.enqueueRoute({ linkId: reopened!.id, url, generation: reopened!.generation });
        }
        const before = await prisma.fetcherAttempt.count({ where: { url } });
        await settle(crawler!, clock, url);
        const link = await prisma.link.findUniqueOrThrow({ where: { url }, include: { attempts: { orderBy: { id: 'asc' } } } });
        expect(link.status, `${url}: ${JSON.stringify(link.attempts.map((a) => [a.fetcher, a.success, a.errorType]))}`).toBe('done');
        out.push(link.attempts.slice(before).map((a) => `${a.fetcher}:${a.success ? 'ok' : a.errorType}`));
      }
      return out;
    };

    const one = await pass(true);
    expect(one.every((a) => a.length === 1 && a[0] === 'simple_http:ok')).toBe(true);

    clock.set(t0 + DAY_MS + 60_000);
    const two = await pass(false);
    expect(site.kind).toBe('botwall');
    console.log('site changes e2e, pass 2 (bot wall):', JSON.stringify(two));
    // The wall refuses plain HTTP on the first page(s) of the pass; the rest go straight to the stealth browser.
    const plainInTwo = two.filter((a) => a.some((x) => x.startsWith('simple_http'))).length;
    expect(plainInTwo).toBeGreaterThanOrEqual(1);
    expect(plainInTwo).toBeLessThanOrEqual(AT_MOST);
    expect(two.slice(AT_MOST)).toEqual(two.slice(AT_MOST).map(() => ['playwright_stealth:ok']));
    const plainAtWall = site.requestLog().filter((r) => r.kind === 'botwall' && r.client === 'plain');
    expect(plainAtWall.length).toBeLessThanOrEqual(AT_MOST);

    clock.set(t0 + 70 * DAY_MS + 60_000);
    const three = await pass(false);
    expect(site.kind).toBe('static');
    console.log('site changes e2e, pass 3 (wall gone):', JSON.stringify(three));
    const browserInThree = three.filter((a) => a.some((x) => x.startsWith('playwright'))).length;
    expect(browserInThree).toBeLessThanOrEqual(AT_MOST);
    expect(three.slice(AT_MOST)).toEqual(three.slice(AT_MOST).map(() => ['simple_http:ok']));
  }, 400_000);
});
