/**
 * The sim web seen by the crawler's real browser fetchers: client classes by headers, render beacons, and the walls'
 * cookie-and-reload interstitials waited out by the browsers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateResponse } from '@crawler/core';
import { createDefaultRegistry, createPlaywrightFetcher } from '@crawler/fetchers';
import { startSimWeb, type SimWeb } from './sim-web.js';

// A short wait keeps the wall that never clears for plain playwright cheap here; the interstitials clear in 300 ms.
const CHALLENGE_WAIT_MS = 4_000;
const registry = createDefaultRegistry({ allowPrivateNetworks: true, chromiumPath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', browser: { challengeWaitMs: CHALLENGE_WAIT_MS } });
let web: SimWeb;

beforeAll(async () => {
  web = await startSimWeb({
    sites: [{ kind: 'static' }, { kind: 'spa' }, { kind: 'botwall', challengeDelayMs: 300 }, { kind: 'interstitial', challengeDelayMs: 300 }],
    firstHost: '127.0.4.10',
  });
});
afterAll(async () => {
  await registry.closeAll();
  await web.close();
});

const fetchWith = (name: string, url: string) => registry.get(name).fetch({ url, timeoutMs: 20_000, maxBytes: 1 << 22 });

describe('sim web and real browsers', () => {
  it('counts a browser as a browser and an SPA rendered by it as served', async () => {
    const [, spa] = web.sites;
    const res = await fetchWith('playwright', spa!.urls(1)[0]!);
    expect(res.text).toContain('data-rendered="true"');
    await new Promise((r) => setTimeout(r, 200));
    expect(spa!.stats()).toMatchObject({ requests: { plain: 0, browser: 1 }, served: 1, blocked: 0 });
  }, 60_000);

  it('the webdriver-refusing wall stops plain playwright after the bounded wait and lets the stealth browser through', async () => {
    const [, , wall] = web.sites;
    const [u1, u2] = wall!.urls(2);
    const plainBrowser = await fetchWith('playwright', u1!);
    expect(plainBrowser.status).toBe(403);
    expect(plainBrowser.text).toContain('could not be verified');
    expect(plainBrowser.challenge).toMatchObject({ cleared: false, vendor: 'js_cookie_check' });
    expect(plainBrowser.challenge!.waitedMs).toBeGreaterThanOrEqual(CHALLENGE_WAIT_MS - 1_000);
    const stealth = await fetchWith('playwright_stealth', u2!);
    expect(stealth.status).toBe(200);
    expect(stealth.text).toContain('botwall-2 page 1');
    expect(stealth.text).not.toContain('Checking your browser');
    expect(stealth.challenge).toMatchObject({ kind: 'interstitial', firstKind: 'interstitial', cleared: true, documents: [{ url: u2, status: 403 }, { url: u2, status: 200 }] });
    // On a loaded machine the check may have reloaded before its HTML could be read: it is then known by what it did
    // (a cookie and a reload), its vendor unnamed, as the check_then_block test allows.
    expect([null, 'js_cookie_check']).toContain(stealth.challenge!.vendor);
    expect(stealth.challenge!.firstVendor).toBe(stealth.challenge!.vendor);
    expect(wall!.requestLog().map((r) => [r.client, r.outcome])).toEqual([
      ['browser', 'challenge'],
      ['browser', 'challenge'],
      ['browser', 'served'],
    ]);
  }, 60_000);

  it('a 20-page walled site costs the stealth browser one challenge: the clearance cookie stays in the site context', async () => {
    const [, , , site] = web.sites;
    const urls = site!.urls(20);
    const results = [];
    for (const u of urls) results.push(await fetchWith('playwright_stealth', u));
    expect(results.map((r) => r.status)).toEqual(urls.map(() => 200));
    results.forEach((r, i) => expect(r.text).toContain(`interstitial-3 page ${i}`));
    // Challenges met per page: the first page's, then none.
    expect(results.map((r) => (r.challenge ? 1 : 0))).toEqual(urls.map((_, i) => (i === 0 ? 1 : 0)));
    const log = site!.requestLog();
    expect(log.filter((r) => r.outcome === 'challenge')).toHaveLength(1);
    expect(log.filter((r) => r.outcome === 'served')).toHaveLength(20);
  }, 120_000);

  it('the interstitial clears for the plain browser too (it does not refuse automation)', async () => {
    const [, , , site] = web.sites;
    const res = await fetchWith('playwright', site!.urls(1, 40)[0]!);
    expect(res).toMatchObject({ status: 200, challenge: { cleared: true } });
    expect(res.text).toContain('interstitial-3 page 40');
  }, 60_000);

  it('a site visited again after its context closed keeps its clearance: no second challenge', async () => {
    const web2 = await startSimWeb({ sites: [{ kind: 'interstitial', challengeDelayMs: 300 }], firstHost: '127.0.4.30' });
    // Contexts close after 300 ms idle here (30 s by default), as they do between a site's visits in a long crawl.
    const fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true, chromiumPath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', browser: { challengeWaitMs: CHALLENGE_WAIT_MS, contextIdleMs: 300 } });
    try {
      const site = web2.sites[0]!;
      const [u1, u2] = site.urls(2);
      expect(await fetcher.fetch({ url: u1!, timeoutMs: 20_000 })).toMatchObject({ status: 200, challenge: { cleared: true } });
      for (let i = 0; i < 100 && fetcher.pool.stats().openContexts > 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(fetcher.pool.stats().openContexts).toBe(0);
      const again = await fetcher.fetch({ url: u2!, timeoutMs: 20_000 });
      expect(again.status).toBe(200);
      expect(again.challenge).toBeUndefined();
      expect(fetcher.pool.stats().contextsCreated).toBe(2);
      expect(site.requestLog().map((r) => [r.path, r.outcome])).toEqual([
        [new URL(u1!).pathname, 'challenge'],
        [new URL(u1!).pathname, 'served'],
        [new URL(u2!).pathname, 'served'],
      ]);
    } finally {
      await fetcher.close();
      await web2.close();
    }
  }, 60_000);

  it('the browser waits while an Anubis-style page (200, long explanation) does its proof of work, and keeps the real page', async () => {
    // The script starts its work after 1.5 s, longer than the page takes to settle: a browser that did not know the
    // page for a challenge would return the challenge as the page.
    const web2 = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'anubis', challengeDelayMs: 1_500, name: 'forge' }], firstHost: '127.0.4.40' });
    try {
      const site = web2.sites[0]!;
      const [u1, u2] = site.urls(2);
      const first = await fetchWith('playwright', u1!);
      expect(first.status).toBe(200);
      expect(first.text).toContain('<h1>forge page 0</h1>');
      expect(first.text).not.toContain('not a bot');
      expect(first.finalUrl).toBe(u1);
      expect(first.challenge).toMatchObject({ vendor: 'anubis', cleared: true, documents: [{ url: u1, status: 200 }, { url: u1, status: 200 }] });
      // The cookie the pass endpoint set stays in the site's context: the next page is served at once.
      const second = await fetchWith('playwright', u2!);
      expect(second.challenge).toBeUndefined();
      expect(second.text).toContain('<h1>forge page 1</h1>');
      expect(site.requestLog().map((r) => [r.path, r.outcome])).toEqual([
        [new URL(u1!).pathname, 'challenge'],
        [new URL(u1!).pathname, 'served'],
        [new URL(u2!).pathname, 'served'],
      ]);
    } finally {
      await web2.close();
    }
  }, 60_000);

  it("the browser waits while a Fastly-style Client Challenge (200) solves its work and posts it back, and keeps the real page", async () => {
    // The script starts its work after 1.5 s, longer than the page takes to settle: a browser that did not know the
    // page for a challenge would return "Client Challenge" as the page.
    const web2 = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'fastly', challengeDelayMs: 1_500, name: 'journal' }], firstHost: '127.0.4.70' });
    try {
      const site = web2.sites[0]!;
      const [u1, u2] = site.urls(2);
      const first = await fetchWith('playwright', u1!);
      expect(first.status).toBe(200);
      expect(first.text).toContain('<h1>journal page 0</h1>');
      expect(first.text).not.toContain('Client Challenge');
      expect(first.challenge).toMatchObject({ vendor: 'fastly', kind: 'interstitial', cleared: true, documents: [{ url: u1, status: 200 }, { url: u1, status: 200 }] });
      const second = await fetchWith('playwright', u2!);
      expect(second.challenge).toBeUndefined();
      expect(second.text).toContain('<h1>journal page 1</h1>');
      expect(site.requestLog().map((r) => [r.path, r.outcome])).toEqual([
        [new URL(u1!).pathname, 'challenge'],
        [new URL(u1!).pathname, 'served'],
        [new URL(u2!).pathname, 'served'],
      ]);
    } finally {
      await web2.close();
    }
  }, 60_000);

  it('returns at once a Wordfence or Radware block (a refusal) and a Cloudflare interactive challenge (a captcha nobody ticks)', async () => {
    const web2 = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'wordfence' }, { kind: 'interstitial', wallFamily: 'cloudflare_interactive' }, { kind: 'interstitial', wallFamily: 'radware' }], firstHost: '127.0.4.80' });
    try {
      const expected = [
        { vendor: 'wordfence', kind: 'refusal' },
        { vendor: 'cloudflare', kind: 'captcha' },
        { vendor: 'radware', kind: 'refusal' },
      ];
      for (const [i, site] of web2.sites.entries()) {
        const [url] = site.urls(1);
        const res = await fetchWith('playwright', url!);
        expect(res.status).toBe(403);
        expect(res.challenge).toEqual({ ...expected[i], firstVendor: expected[i]!.vendor, firstKind: expected[i]!.kind, cleared: false, waitedMs: 0, documents: [{ url, status: 403 }] });
        expect(site.requestLog().map((r) => r.outcome)).toEqual(['challenge']);
      }
    } finally {
      await web2.close();
    }
  }, 60_000);

  it("the browser waits on F5 Bot Defense's sensor stub (200, /TSPD/?type=12) until its cookie and reload bring the page", async () => {
    const web2 = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'f5_tspd', challengeDelayMs: 1_500, name: 'catalogue' }], firstHost: '127.0.4.90' });
    try {
      const site = web2.sites[0]!;
      const [url] = site.urls(1);
      const res = await fetchWith('playwright', url!);
      expect(res.status).toBe(200);
      expect(res.text).toContain('<h1>catalogue page 0</h1>');
      expect(res.challenge).toMatchObject({ vendor: 'f5', kind: 'interstitial', cleared: true, documents: [{ url, status: 200 }, { url, status: 200 }] });
      expect(site.requestLog().map((r) => r.outcome)).toEqual(['challenge', 'served']);
    } finally {
      await web2.close();
    }
  }, 60_000);

  it('stops waiting when the interstitial it waits on turns into a refusal, and records it the same whenever the reload came', async () => {
    // The check runs, sets its cookie and reloads into a firewall block (Cloudflare's JS challenge ending on 1020). The
    // first site reloads after 1.5 s, longer than the page takes to settle, so the browser has taken the interstitial
    // for one and is waiting on it; the second reloads at once, before the browser first looks. The wait is longer
    // than the test may take: a browser that kept waiting on the block page would not finish in time.
    const longWaitMs = 300_000;
    const web2 = await startSimWeb({
      sites: [
        { kind: 'interstitial', wallFamily: 'check_then_block', challengeDelayMs: 1_500, name: 'checked' },
        { kind: 'interstitial', wallFamily: 'check_then_block', challengeDelayMs: 0, name: 'quick' },
      ],
      firstHost: '127.0.4.60',
    });
    const fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true, chromiumPath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', browser: { challengeWaitMs: longWaitMs } });
    try {
      for (const site of web2.sites) {
        const [url] = site.urls(1);
        const res = await fetcher.fetch({ url: url!, timeoutMs: longWaitMs + 60_000 });
        expect(res.status).toBe(403);
        expect(res.text).toContain('Sorry, you have been blocked');
        // The wait ended on the firewall's refusal; it started as the cookie-and-reload check. A check that reloads at
        // once may be gone before its HTML could be read: then it is known by what it did, its vendor unnamed.
        expect(res.challenge).toMatchObject({ vendor: 'cloudflare', kind: 'refusal', firstKind: 'interstitial', cleared: false, documents: [{ url, status: 503 }, { url, status: 403 }] });
        expect(site.name === 'quick' ? [null, 'js_cookie_check'] : ['js_cookie_check']).toContain(res.challenge!.firstVendor);
        expect(res.challenge!.waitedMs).toBeLessThan(longWaitMs);
        expect(validateResponse({ status: res.status, headers: res.headers, body: res.body })).toMatchObject({ blockType: 'blocked_captcha', blockVendor: 'cloudflare' });
        expect(site.requestLog().map((r) => r.outcome)).toEqual(['challenge', 'challenge']);
      }
    } finally {
      await fetcher.close();
      await web2.close();
    }
  }, 60_000);

  it('stops waiting when the interstitial turns into a captcha or a refusal in place, with no navigation', async () => {
    // Cloudflare's managed challenge swaps its spinner for the Turnstile checkbox, and Akamai's check writes "Access
    // Denied" over the document, 1.5 s in (longer than the page takes to settle, so the browser is already waiting on
    // an interstitial). No new document ever comes. The wait is longer than the test may take: a browser that kept
    // waiting for a navigation would not finish in time.
    const longWaitMs = 300_000;
    const web2 = await startSimWeb({
      sites: [
        { kind: 'interstitial', wallFamily: 'managed_then_captcha', challengeDelayMs: 1_500, name: 'managed' },
        { kind: 'interstitial', wallFamily: 'check_then_deny_in_place', challengeDelayMs: 1_500, name: 'denied' },
      ],
      firstHost: '127.0.4.100',
    });
    const fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true, chromiumPath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', browser: { challengeWaitMs: longWaitMs } });
    try {
      const expected = [
        { status: 403, text: 'Verify you are human by completing the action below.', vendor: 'cloudflare', kind: 'captcha' },
        { status: 200, text: 'Access Denied', vendor: 'akamai', kind: 'refusal' },
      ];
      for (const [i, site] of web2.sites.entries()) {
        const [url] = site.urls(1);
        const res = await fetcher.fetch({ url: url!, timeoutMs: longWaitMs + 60_000 });
        expect(res.status).toBe(expected[i]!.status);
        expect(res.text).toContain(expected[i]!.text);
        // What the wait ended on, and what it started as: the same vendor's check.
        const { vendor, kind } = expected[i]!;
        expect(res.challenge).toMatchObject({ vendor, kind, firstVendor: vendor, firstKind: 'interstitial', cleared: false, documents: [{ url, status: expected[i]!.status }] });
        expect(res.challenge!.waitedMs).toBeGreaterThan(0);
        expect(res.challenge!.waitedMs).toBeLessThan(longWaitMs);
        expect(validateResponse({ status: res.status, headers: res.headers, body: res.body })).toMatchObject({ blockType: 'blocked_captcha', blockVendor: expected[i]!.vendor });
        expect(site.requestLog().map((r) => r.outcome)).toEqual(['challenge']);
      }
    } finally {
      await fetcher.close();
      await web2.close();
    }
  }, 60_000);

  it('a wall that challenges only the second page of a session: the browser keeps the session and its clearance across the site', async () => {
    // The site serves a visitor's first page with a session cookie and challenges that session's later requests. A
    // browser that dropped the session would never be challenged (every page a new visitor's first); one that dropped
    // the clearance would be challenged on every page after the first.
    const web2 = await startSimWeb({
      sites: [
        { kind: 'interstitial', wallFamily: 'second_request', challengeDelayMs: 300, name: 'watchful' },
        { kind: 'interstitial', wallFamily: 'second_request', challengeDelayMs: 300, name: 'watchful' },
      ],
      firstHost: '127.0.4.110',
    });
    try {
      for (const [i, name] of ['playwright', 'playwright_stealth'].entries()) {
        const site = web2.sites[i]!;
        const urls = site.urls(7);
        const inOrder = [];
        for (const url of urls.slice(0, 3)) inOrder.push(await fetchWith(name, url));
        // The rest at once: pages of one site share its context, and so its cookies.
        const together = await Promise.all(urls.slice(3).map((url) => fetchWith(name, url)));
        const results = [...inOrder, ...together];
        expect(results.map((r) => r.status)).toEqual(urls.map(() => 200));
        results.forEach((r, n) => expect(r.text).toContain(`<h1>watchful page ${n}</h1>`));
        expect(results.map((r) => r.challenge?.cleared ?? null)).toEqual([null, true, null, null, null, null, null]);
        const log = site.requestLog().map((r) => `${r.path} ${r.outcome}`);
        expect(log.slice(0, 4)).toEqual(['/page/0 served', '/page/1 challenge', '/page/1 served', '/page/2 served']);
        expect(log.slice(4).sort()).toEqual(urls.slice(3).map((u) => `${new URL(u).pathname} served`));
      }
    } finally {
      await web2.close();
    }
  }, 90_000);

  it('returns a wall that refuses at once: no browser waits on a page that never clears', async () => {
    // Cloudflare's "Sorry, you have been blocked" has a script (it reveals the visitor's address on a click) but
    // nothing that ever lets anyone through: a wait would hold the browser for CHALLENGE_WAIT_MS for the same page.
    const web2 = await startSimWeb({ sites: [{ kind: 'botwall', wallFamily: 'blocked', name: 'shop' }], firstHost: '127.0.4.50' });
    try {
      const site = web2.sites[0]!;
      const urls = site.urls(2);
      for (const [i, name] of ['playwright', 'playwright_stealth'].entries()) {
        const res = await fetchWith(name, urls[i]!);
        expect(res.status).toBe(403);
        expect(res.text).toContain('Sorry, you have been blocked');
        expect(res.challenge).toEqual({ vendor: 'cloudflare', kind: 'refusal', firstVendor: 'cloudflare', firstKind: 'refusal', cleared: false, waitedMs: 0, documents: [{ url: urls[i], status: 403 }] });
        // What decides the next step (block pause, switch of tool, backoff) reads the page as it did after a wait.
        expect(validateResponse({ status: res.status, headers: res.headers, body: res.body })).toMatchObject({ isBlocked: true, blockType: 'blocked_captcha', blockVendor: 'cloudflare' });
      }
      expect(site.requestLog().map((r) => [r.client, r.outcome])).toEqual([
        ['browser', 'challenge'],
        ['browser', 'challenge'],
      ]);
    } finally {
      await web2.close();
    }
  }, 60_000);
});
