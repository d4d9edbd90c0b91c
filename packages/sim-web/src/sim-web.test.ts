import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { ManualClock, validateResponseDetailed } from '@crawler/core';
import { createDefaultRegistry } from '@crawler/fetchers';
import { ANUBIS_COOKIE, ANUBIS_PASS_PATH } from './anubis.js';
import { CLEARANCE_COOKIE } from './interstitial.js';
import { FASTLY_COOKIE, FASTLY_POST_BACK_PATH } from './fastly.js';
import { loopbackAddress, startSimWeb, type SimWeb } from './sim-web.js';
import { SESSION_COOKIE } from './sim-site.js';

const registry = createDefaultRegistry({ allowPrivateNetworks: true });
const http = registry.get('simple_http');
let web: SimWeb | undefined;

afterEach(async () => {
  await web?.close();
  web = undefined;
});
afterAll(() => registry.closeAll());

const get = (url: string) => http.fetch({ url, timeoutMs: 5_000, maxBytes: 1 << 20 });

describe('loopbackAddress', () => {
  it('counts addresses after the first, skipping .0 and .255', () => {
    expect(loopbackAddress('127.0.0.2', 0)).toBe('127.0.0.2');
    expect(loopbackAddress('127.0.0.2', 3)).toBe('127.0.0.5');
    expect(loopbackAddress('127.0.0.250', 6)).toBe('127.0.1.2');
    expect(() => loopbackAddress('10.0.0.1', 0)).toThrow(/127/);
  });
});

describe('startSimWeb', () => {
  it('puts every site on its own loopback address (its own domain)', async () => {
    web = await startSimWeb({ sites: [{ kind: 'static' }, { kind: 'spa' }, { kind: 'files' }], firstHost: '127.0.3.10' });
    expect(web.sites.map((s) => s.domain)).toEqual(['127.0.3.10', '127.0.3.11', '127.0.3.12']);
    expect(new Set(web.sites.map((s) => new URL(s.origin).hostname)).size).toBe(3);
    expect(web.site('127.0.3.11')?.kind).toBe('spa');
    expect(web.sites[2]!.urls(2, 5)).toEqual([`${web.sites[2]!.origin}/files/doc-5.pdf`, `${web.sites[2]!.origin}/files/doc-6.pdf`]);
  });

  it('answers plain HTTP by kind and counts it: static served, SPA shell, wall challenged, PDF served', async () => {
    web = await startSimWeb({ sites: [{ kind: 'static' }, { kind: 'spa' }, { kind: 'botwall' }, { kind: 'files' }], firstHost: '127.0.3.20' });
    const [st, spa, wall, files] = web.sites;
    const a = await get(st!.urls(1)[0]!);
    expect(a.status).toBe(200);
    expect(a.text).toContain('page 0');
    const b = await get(spa!.urls(1)[0]!);
    expect(b.text).toContain('<div id="app"></div>');
    const c = await get(wall!.urls(1)[0]!);
    expect(c.status).toBe(403);
    expect(c.text).toContain('Just a moment...');
    const d = await get(files!.urls(1)[0]!);
    expect(d.contentType).toBe('application/pdf');

    const s = web.stats();
    expect(s.sites.map((x) => [x.name, x.requests.plain, x.requests.browser, x.served, x.blocked])).toEqual([
      ['static-0', 1, 0, 1, 0],
      ['spa-1', 1, 0, 0, 0],
      ['botwall-2', 1, 0, 0, 1],
      ['files-3', 1, 0, 1, 0],
    ]);
    expect(s.totals).toMatchObject({ pageRequests: 4, served: 2, blocked: 1, requests: { plain: 4, browser: 0 } });
    expect(spa!.requestLog()[0]).toMatchObject({ seq: 1, path: '/page/0', client: 'plain', kind: 'spa', outcome: 'shell' });
  });

  it('serves a wall of a family no signature knows when asked: only its 503 and its all-script page give it away', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', unknownWallFamily: true }, { kind: 'interstitial' }], firstHost: '127.0.3.60' });
    const [unknown, known] = await Promise.all(web.sites.map((s) => http.fetch({ url: s.urls(1)[0]! })));
    for (const r of [unknown!, known!]) expect(r.status).toBe(503);
    const detailOf = (r: typeof unknown) => validateResponseDetailed({ status: r!.status, headers: r!.headers, body: r!.text ?? '' });
    expect(detailOf(known).result).toMatchObject({ blockType: 'blocked_captcha', blockVendor: 'js_cookie_check' });
    expect(detailOf(unknown).challenge.isChallenge).toBe(false);
    expect(detailOf(unknown).result).toMatchObject({ blockType: 'blocked_captcha', blockVendor: null });
  });

  it('an anubis wall answers 200 with its proof-of-work page, refuses a forged answer and lets the work through', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'anubis', name: 'forge' }], firstHost: '127.0.3.70' });
    const site = web.sites[0]!;
    const [url] = site.urls(1);
    const wall = await get(url!);
    expect(wall.status).toBe(200);
    // The crawler's own verdict: Anubis's challenge, not a page to store.
    expect(validateResponseDetailed({ status: wall.status, headers: wall.headers, body: wall.text ?? '' }).result).toMatchObject({ blockType: 'blocked_captcha', blockVendor: 'anubis' });
    const data = JSON.parse(/<script id="anubis_challenge" type="application\/json">(.*?)<\/script>/.exec(wall.text!)![1]!) as { id: string; challenge: string; rules: { difficulty: number } };
    const pass = (nonce: number, response: string) => fetch(`${site.origin}${ANUBIS_PASS_PATH}?${new URLSearchParams({ id: data.id, nonce: String(nonce), response, redir: '/page/0' })}`, { redirect: 'manual' });
    expect((await pass(0, '0'.repeat(64))).status).toBe(403);
    let nonce = 0;
    const hash = (n: number) => createHash('sha256').update(`${data.challenge}${n}`).digest('hex');
    while (!hash(nonce).startsWith('0'.repeat(data.rules.difficulty))) nonce++;
    const passed = await pass(nonce, hash(nonce));
    expect(passed.status).toBe(302);
    expect(passed.headers.get('location')).toBe('/page/0');
    const cookie = passed.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie.startsWith(`${ANUBIS_COOKIE}=`)).toBe(true);
    const page = await http.fetch({ url: url!, timeoutMs: 5_000, maxBytes: 1 << 20, headers: { cookie } });
    expect(page.text).toContain('<h1>forge page 0</h1>');
    expect(site.requestLog().map((r) => r.outcome)).toEqual(['challenge', 'served']);
  });

  it('a blocked wall refuses every request with a firewall block page the detector takes for a refusal', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'blocked' }], firstHost: '127.0.3.80' });
    const site = web.sites[0]!;
    const [url] = site.urls(1);
    for (let i = 0; i < 2; i++) {
      const r = await get(url!);
      expect(r.status).toBe(403);
      const { result, challenge } = validateResponseDetailed({ status: r.status, headers: r.headers, body: r.text ?? '' });
      expect(result).toMatchObject({ blockType: 'blocked_captcha', blockVendor: 'cloudflare' });
      expect(challenge.kind).toBe('refusal');
    }
    expect(site.stats()).toMatchObject({ blocked: 2, served: 0 });
  });

  it('a check-then-block wall answers its interstitial, and the clearance its script earns gets the block page, never the content', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'check_then_block' }], firstHost: '127.0.3.90' });
    const site = web.sites[0]!;
    const [url] = site.urls(1);
    const check = await get(url!);
    expect(check.status).toBe(503);
    expect(validateResponseDetailed({ status: check.status, headers: check.headers, body: check.text ?? '' }).challenge.kind).toBe('interstitial');
    // What the script would store: the token the page carries.
    const token = new RegExp(`${CLEARANCE_COOKIE}=([0-9a-f]+)`).exec(check.text!)![1]!;
    const after = await http.fetch({ url: url!, timeoutMs: 5_000, maxBytes: 1 << 20, headers: { cookie: `${CLEARANCE_COOKIE}=${token}` } });
    expect(after.status).toBe(403);
    const { result, challenge } = validateResponseDetailed({ status: after.status, headers: after.headers, body: after.text ?? '' });
    expect(result).toMatchObject({ blockType: 'blocked_captcha', blockVendor: 'cloudflare' });
    expect(challenge.kind).toBe('refusal');
    expect(site.stats()).toMatchObject({ blocked: 2, served: 0 });
  });

  it('a fastly wall answers 200 with its Client Challenge, refuses a wrong answer and lets the solved work through', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'fastly', name: 'journal' }], firstHost: '127.0.3.100' });
    const site = web.sites[0]!;
    const [url] = site.urls(1);
    const wall = await get(url!);
    expect(wall.status).toBe(200);
    const { result, challenge } = validateResponseDetailed({ status: wall.status, headers: wall.headers, body: wall.text ?? '' });
    expect(result).toMatchObject({ blockType: 'blocked_captcha', blockVendor: 'fastly' });
    expect(challenge.kind).toBe('interstitial');
    const [, work, token] = /init\((\[.*?\]), "([0-9a-f]+)"/.exec(wall.text!)!;
    const { base, hash } = (JSON.parse(work!) as { data: { base: string; hash: string } }[])[0]!.data;
    const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const answer = [...chars].flatMap((a) => [...chars].map((b) => a + b)).find((a) => createHash('sha256').update(base + a).digest('hex') === hash)!;
    const postBack = (a: string) => fetch(`${site.origin}${FASTLY_POST_BACK_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, data: [{ ty: 'pow', base, answer: a }] }) });
    expect((await postBack(answer === 'aa' ? 'ab' : 'aa')).status).toBe(403);
    const passed = await postBack(answer);
    expect(passed.status).toBe(200);
    const cookie = passed.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie.startsWith(`${FASTLY_COOKIE}=`)).toBe(true);
    const page = await http.fetch({ url: url!, timeoutMs: 5_000, maxBytes: 1 << 20, headers: { cookie } });
    expect(page.text).toContain('<h1>journal page 0</h1>');
    expect(site.requestLog().map((r) => r.outcome)).toEqual(['challenge', 'served']);
  });

  it('wordfence, cloudflare_interactive, radware and f5_tspd walls answer pages the detector names, each of its kind', async () => {
    const families = ['wordfence', 'cloudflare_interactive', 'radware', 'f5_tspd'] as const;
    web = await startSimWeb({ sites: families.map((wallFamily) => ({ kind: 'interstitial' as const, wallFamily })), firstHost: '127.0.3.110' });
    const [wordfence, interactive, radware, f5] = await Promise.all(web.sites.map((site) => get(site.urls(1)[0]!)));
    const verdict = (r: typeof wordfence) => {
      const { result, challenge } = validateResponseDetailed({ status: r!.status, headers: r!.headers, body: r!.text ?? '' });
      return { status: r!.status, blockType: result.blockType, vendor: result.blockVendor, kind: challenge.kind };
    };
    expect(verdict(wordfence)).toEqual({ status: 403, blockType: 'blocked_captcha', vendor: 'wordfence', kind: 'refusal' });
    expect(verdict(interactive)).toEqual({ status: 403, blockType: 'blocked_captcha', vendor: 'cloudflare', kind: 'captcha' });
    expect(interactive!.headers['cf-mitigated']).toBe('challenge');
    expect(verdict(radware)).toEqual({ status: 403, blockType: 'blocked_captcha', vendor: 'radware', kind: 'refusal' });
    expect(verdict(f5)).toEqual({ status: 200, blockType: 'blocked_captcha', vendor: 'f5', kind: 'interstitial' });
    // The F5 stub clears only once its sensor has run: a second plain request gets the stub again.
    const again = await get(web.sites[3]!.urls(1)[0]!);
    expect(again.text).toContain('/TSPD/?type=12');
    expect(web.sites.map((site) => site.stats().served)).toEqual([0, 0, 0, 0]);
  });

  it('walls that escalate in place serve only the check: the detector sees an interstitial until their script runs', async () => {
    const families = ['managed_then_captcha', 'check_then_deny_in_place'] as const;
    web = await startSimWeb({ sites: families.map((wallFamily) => ({ kind: 'interstitial' as const, wallFamily })), firstHost: '127.0.3.120' });
    const [managed, akamai] = await Promise.all(web.sites.map((site) => get(site.urls(1)[0]!)));
    const verdict = (r: typeof managed) => {
      const { result, challenge } = validateResponseDetailed({ status: r!.status, headers: r!.headers, body: r!.text ?? '' });
      return { status: r!.status, blockType: result.blockType, vendor: result.blockVendor, kind: challenge.kind };
    };
    expect(verdict(managed)).toEqual({ status: 403, blockType: 'blocked_captcha', vendor: 'cloudflare', kind: 'interstitial' });
    expect(verdict(akamai)).toEqual({ status: 200, blockType: 'blocked_captcha', vendor: 'akamai', kind: 'interstitial' });
    // Neither sets a cookie nor reloads: nothing the page does ever asks the site again.
    for (const r of [managed, akamai]) expect(r!.text).not.toMatch(/document\.cookie|location\.(reload|href|replace|assign)/);
    expect(web.sites.map((site) => site.requestLog().map((x) => x.outcome))).toEqual([['challenge'], ['challenge']]);
  });

  it('a second_request wall serves a visitor its first page with a session and challenges the session after that', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', wallFamily: 'second_request', name: 'watchful' }], firstHost: '127.0.3.130' });
    const [u0, u1] = web.sites[0]!.urls(2);
    const first = await get(u0!);
    expect(first.status).toBe(200);
    const session = first.headers['set-cookie']!.split(';')[0]!;
    expect(session).toMatch(new RegExp(`^${SESSION_COOKIE}=[0-9a-f]+$`));
    // The same session again: the check. Without the session: a new visitor, served.
    const again = await http.fetch({ url: u1!, timeoutMs: 5_000, maxBytes: 1 << 20, headers: { cookie: session } });
    expect(again.status).toBe(503);
    expect(again.text).toContain('Checking your browser');
    expect((await get(u1!)).status).toBe(200);
    expect(web.sites[0]!.requestLog().map((r) => r.outcome)).toEqual(['served', 'challenge', 'served']);
  });

  it('a rate-limiting site answers 429 with Retry-After to the end of its window, counted as blocks, then recovers', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 10, 0, 0));
    web = await startSimWeb({ sites: [{ kind: 'ratelimit', rateLimit: { maxRequests: 2, windowMs: 3_600_000 } }], clock, firstHost: '127.0.3.30' });
    const site = web.sites[0]!;
    const urls = site.urls(4);
    expect((await get(urls[0]!)).status).toBe(200);
    clock.advance(15 * 60_000);
    expect((await get(urls[1]!)).status).toBe(200);
    const limited = await get(urls[2]!);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe(String(45 * 60));
    expect(site.stats()).toMatchObject({ blocked: 1, served: 2, pageRequests: 3 });
    clock.advance(45 * 60_000);
    expect((await get(urls[3]!)).status).toBe(200);
    expect(site.stats()).toMatchObject({ blocked: 1, served: 3 });
  });

  it('changes kind at a simulated time and after N requests, recording when', async () => {
    const t0 = Date.UTC(2026, 0, 1);
    const clock = new ManualClock(t0);
    web = await startSimWeb({
      clock,
      firstHost: '127.0.3.40',
      sites: [
        { kind: 'static', changes: [{ kind: 'botwall', atMs: t0 + 86_400_000 }] },
        { kind: 'spa', changes: [{ kind: 'static', afterRequests: 2 }] },
      ],
    });
    const [walled, ssr] = web.sites;
    expect((await get(walled!.urls(1)[0]!)).status).toBe(200);
    clock.advance(86_400_000);
    expect((await get(walled!.urls(1, 1)[0]!)).status).toBe(403);
    expect(walled!.stats()).toMatchObject({ kind: 'botwall', initialKind: 'static', changes: [{ kind: 'botwall', atMs: t0 + 86_400_000, fromSeq: 2 }] });

    for (const u of ssr!.urls(2)) expect((await get(u)).text).toContain('<div id="app"></div>');
    const third = await get(ssr!.urls(1, 2)[0]!);
    expect(third.text).toContain('<article>');
    expect(ssr!.stats()).toMatchObject({ kind: 'static', served: 1, changes: [{ kind: 'static', fromSeq: 3 }] });
  });

  it('does not count robots.txt, beacons or unknown paths as page requests', async () => {
    web = await startSimWeb({ sites: [{ kind: 'static' }], firstHost: '127.0.3.50' });
    const o = web.sites[0]!.origin;
    expect((await get(`${o}/robots.txt`)).status).toBe(200);
    expect((await get(`${o}/favicon.ico`)).status).toBe(404);
    expect((await get(`${o}/__sim/beacon?seq=99`)).status).toBe(204);
    expect(web.stats().totals.pageRequests).toBe(0);
  });

  it('puts robots.txt behind the wall when told to, and serves it to a client that passed', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', wallCoversRobots: true, robotsTxt: 'User-agent: *\nDisallow: /page/9\n' }, { kind: 'interstitial' }], firstHost: '127.0.3.60' });
    const [walled, open] = web.sites;
    const first = await get(`${walled!.origin}/robots.txt`);
    expect(first.status).toBe(503);
    expect(first.text).toContain('Checking your browser');
    const token = /sim_clearance=([0-9a-f]+)/.exec(first.text!)![1]!;
    const passed = await http.fetch({ url: `${walled!.origin}/robots.txt`, timeoutMs: 5_000, headers: { cookie: `${CLEARANCE_COOKIE}=${token}` } });
    expect([passed.status, passed.text]).toEqual([200, 'User-agent: *\nDisallow: /page/9\n']);
    expect(walled!.robotsLog()).toEqual([{ client: 'plain', cleared: false }, { client: 'plain', cleared: true }]);
    expect(walled!.stats().pageRequests).toBe(0);
    // Without the option robots.txt stays open to anyone.
    expect((await get(`${open!.origin}/robots.txt`)).status).toBe(200);
  });
});
