import { describe, expect, it } from 'vitest';
import { loadConfig } from '@crawler/pipeline';
import { explainUrl, formatExplanation } from './explain.js';
import { parseLearningFlag } from './enqueue.js';

const config = loadConfig({ DATABASE_URL: 'postgresql://postgres@127.0.0.1/x' });
const score = (fetcher: string, n: number, conf: number) => ({ fetcher, sampleSize: n, decayedSuccesses: conf * n, successRate: conf, sampleFactor: 1, confidence: conf, eligible: n >= 5 });

describe('explainUrl', () => {
  it('takes the learned fetcher above the threshold and shows every score', async () => {
    const best = score('playwright', 10, 0.9);
    const e = await explainUrl('https://Wikipedia.org/wiki/X#top', config, { attempts: { findBestFetcher: async () => ({ best, scores: [best, score('simple_http', 3, 1)] }) }, routes: { get: async () => null } });
    expect(e.url).toBe('https://wikipedia.org/wiki/X');
    expect(e.heuristics).toContainEqual({ type: 'domain', value: 'wikipedia.org' });
    expect(e.decision).toMatchObject({ action: 'learned', fetcher: 'playwright' });
    const text = formatExplanation(e);
    expect(text).toMatch(/simple_http\s+3 .*\(too few samples\)/);
    expect(text).toContain('decision   learned → playwright');
  });

  it('with proxied tiers, takes the cheapest confident arm and shows every arm with its cost, never a proxy URL', async () => {
    const tiered = loadConfig({
      DATABASE_URL: 'postgresql://postgres@127.0.0.1/x',
      PROXY_TIERS: JSON.stringify([{ name: 'datacenter', cost: 1, urls: ['http://alice:s3cret@dc.example:3128'] }, { name: 'residential', cost: 10, urls: ['socks5://bob:hunter2@res.example:1080'] }]),
    });
    const scores = [score('playwright_stealth', 10, 0.95), score('simple_http@residential', 10, 0.9), score('simple_http@datacenter', 10, 0.8), score('simple_http', 10, 0.1)];
    const e = await explainUrl('https://ranges.example/a', tiered, { attempts: { findBestFetcher: async () => ({ best: scores[0]!, scores }) }, routes: { get: async () => null } });
    // datacenter HTTP: 1.01 / 0.8 ≈ 1.26 per page beats the stealth browser's 1.5 / 0.95 ≈ 1.58.
    expect(e.decision).toMatchObject({ action: 'learned', fetcher: 'simple_http@datacenter' });
    expect(e.arms.map((a) => a.arm)).toEqual(['simple_http@datacenter', 'playwright_stealth', 'simple_http@residential', 'simple_http']);
    expect(e.arms.find((a) => a.arm === 'simple_http@residential')).toMatchObject({ tier: 'residential', cost: 10.01, confident: true, runnable: true });
    const text = formatExplanation(e);
    expect(text).toMatch(/\* simple_http@datacenter\s+conf 0\.800\s+cost 1\.01\s+per page 1\.26/);
    for (const secret of ['alice', 's3cret', 'bob', 'hunter2', 'dc.example', 'res.example']) {
      expect(text).not.toContain(secret);
      expect(JSON.stringify(e)).not.toContain(secret);
    }
  });

  it('probes below the threshold, and in legacy mode follows the route table or fails', async () => {
    const weak = score('playwright', 5, 0.5);
    const stores = { attempts: { findBestFetcher: async () => ({ best: weak, scores: [weak] }) }, routes: { get: async (d: string) => (d === 'routed.example' ? { domain: d, fetcher: 'playwright_stealth' } : null) } };
    expect((await explainUrl('https://x.example/', config, stores)).decision.action).toBe('probe');
    expect((await explainUrl('https://routed.example/', config, stores, false)).decision).toMatchObject({ action: 'hard_coded', fetcher: 'playwright_stealth' });
    expect((await explainUrl('https://x.example/', config, stores, false)).decision.action).toBe('fail');
  });

  it('shows a revisit of a page plain HTTP stored with a validator as a conditional request, not a probe', async () => {
    const weak = score('playwright', 5, 0.5);
    const stored = { contentId: 1n, version: 2, sha256: 'x', fetcher: 'simple_http', etag: '"abc"', lastModified: null };
    const stores = {
      attempts: { findBestFetcher: async () => ({ best: weak, scores: [weak] }) }, routes: { get: async () => null },
      revisitValidators: async (url: string) => (url === 'https://x.example/seen' ? stored : null),
    };
    const e = await explainUrl('https://x.example/seen', config, stores);
    expect(e.decision).toMatchObject({ action: 'revisit', fetcher: 'simple_http' });
    expect(formatExplanation(e)).toContain('version 2 was stored by plain HTTP with ETag "abc"');
    expect((await explainUrl('https://x.example/new', config, stores)).decision.action).toBe('probe');
    const off = loadConfig({ DATABASE_URL: 'postgresql://postgres@127.0.0.1/x', CONDITIONAL_REQUESTS: 'false' });
    expect((await explainUrl('https://x.example/seen', off, stores)).decision.action).toBe('probe');
  });

  it('shows the wall memory: after a probe met a bot wall, the domain goes to the probe\'s tool without a probe, as the router does', async () => {
    const weak = score('playwright', 5, 0.5);
    const walls = { recent: async (d: string) => (d === 'walled.example' ? { fetcher: 'playwright_stealth', reason: 'blocked_captcha' } : null) };
    const stores = { attempts: { findBestFetcher: async () => ({ best: weak, scores: [weak] }) }, routes: { get: async () => null }, walls };
    const e = await explainUrl('https://walled.example/a', config, stores);
    expect(e.decision).toMatchObject({ action: 'domain_memory', fetcher: 'playwright_stealth' });
    expect(formatExplanation(e)).toMatch(/decision {3}domain_memory → playwright_stealth: .*met a bot wall \(blocked_captcha\)/);
    expect((await explainUrl('https://open.example/a', config, stores)).decision.action).toBe('probe');
    // A wall's tool the fleet does not run is no decision (the router would not take it either).
    const noStealth = loadConfig({ DATABASE_URL: 'postgresql://postgres@127.0.0.1/x', FETCHERS: 'simple_http:4,playwright:1' });
    expect((await explainUrl('https://walled.example/a', noStealth, stores)).decision.action).toBe('probe');
  });

  it('shows a file plain HTTP was learned for (a .pdf) going to the wall\'s tool on a walled domain, as the router does', async () => {
    const plain = score('simple_http', 10, 1);
    const walls = { recent: async (d: string) => (d === 'walled.example' ? { fetcher: 'playwright_stealth', reason: 'blocked_captcha' } : null) };
    const stores = { attempts: { findBestFetcher: async () => ({ best: plain, scores: [plain] }) }, routes: { get: async () => null }, walls };
    const e = await explainUrl('https://walled.example/files/doc-1.pdf', config, stores);
    expect(e.decision).toMatchObject({ action: 'domain_memory', fetcher: 'playwright_stealth' });
    expect(formatExplanation(e)).toMatch(/plain HTTP would meet it too/);
    expect((await explainUrl('https://open.example/files/doc-1.pdf', config, stores)).decision).toMatchObject({ action: 'learned', fetcher: 'simple_http' });
  });

  it('shows the domain pause before the decision, with its reason and end', async () => {
    const weak = score('playwright', 5, 0.5);
    const pauses = { pauseOf: async (d: string) => (d === 'limited.example' ? { reason: 'rate_limited', until: '2026-11-30T12:10:00.000Z' } : null) };
    const stores = { attempts: { findBestFetcher: async () => ({ best: weak, scores: [weak] }) }, routes: { get: async () => null }, pauses };
    const e = await explainUrl('https://limited.example/a', config, stores);
    expect(e.pause).toEqual({ reason: 'rate_limited', until: '2026-11-30T12:10:00.000Z' });
    expect(formatExplanation(e)).toMatch(/paused {5}limited\.example until 2026-11-30T12:10:00\.000Z \(rate_limited\).*\ndecision {3}probe/);
    expect((await explainUrl('https://free.example/a', config, stores)).pause).toBeNull();
    expect(formatExplanation(await explainUrl('https://free.example/a', config, stores))).not.toContain('paused');
  });

  it('asks the store with the routing heuristics only, as the router does', async () => {
    let asked: { type: string; value: string }[] = [];
    let alone: { type: string; value: string } | undefined;
    const stores = {
      attempts: {
        findBestFetcher: async (hs: readonly { type: string; value: string }[], o?: { alone?: { type: string; value: string } }) => ((asked = [...hs]), (alone = o?.alone), { best: null, scores: [] }),
      },
      routes: { get: async () => null },
    };
    const e = await explainUrl('https://shop.example/a/b/report.pdf', config, stores);
    // The section is scored by itself, in the same read.
    expect(asked).toEqual([{ type: 'domain', value: 'shop.example' }, { type: 'suffix', value: '.pdf' }]);
    expect(alone).toEqual({ type: 'section', value: 'shop.example/a' });
    expect(e.heuristics).toContainEqual({ type: 'path_depth', value: '3' });
    expect(e.queried).toEqual([asked[0], alone, asked[1]]);
    expect(formatExplanation(e)).toMatch(/\* domain\s+shop\.example/);
    expect(formatExplanation(e)).toMatch(/\n {2}path_depth\s+3/);
  });

  it("judges a section with a sample of its own on it: a static /blog on a domain whose app needs a browser", async () => {
    const browser = score('playwright', 20, 0.95);
    const plain = score('simple_http', 12, 0.9);
    const stores = {
      attempts: { findBestFetcher: async () => ({ best: browser, scores: [browser], alone: { attempts: 12, result: { best: plain, scores: [plain] } } }) },
      routes: { get: async () => null },
    };
    const e = await explainUrl('https://shop.example/blog/post', config, stores);
    expect(e.decision).toMatchObject({ action: 'learned', fetcher: 'simple_http' });
    expect(e.section).toMatchObject({ value: 'shop.example/blog', attempts: 12, judgedOnItsOwn: true });
    expect(formatExplanation(e)).toMatch(/section {4}shop\.example\/blog: 12 attempts of its own, judged on its own attempts/);
    const thin = { ...stores, attempts: { findBestFetcher: async () => ({ best: browser, scores: [browser], alone: { attempts: 4, result: { best: null, scores: [plain] } } }) } };
    expect((await explainUrl('https://shop.example/blog/post', config, thin)).decision).toMatchObject({ action: 'learned', fetcher: 'playwright' });
  });

  it("sets aside a confident fetcher the domain just banned, and falls back to the domain's last working browser", async () => {
    const best = score('simple_http', 20, 0.9);
    const now = new Date('2026-11-22T12:00:00Z');
    const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000);
    const recent = [
      { fetcher: 'simple_http', success: false, isBanned: true, errorType: 'blocked_captcha', attemptedAt: at(5), selectionSource: 'learned' },
      { fetcher: 'playwright_stealth', success: true, isBanned: false, errorType: null, attemptedAt: at(60), selectionSource: 'retry' },
    ];
    const stores = { attempts: { findBestFetcher: async () => ({ best, scores: [best] }) }, routes: { get: async () => null }, domainState: { recentDomainAttempts: async () => recent } };
    const e = await explainUrl('https://walled.example/p', config, stores, undefined, now);
    expect(e.decision).toMatchObject({ action: 'domain_memory', fetcher: 'playwright_stealth' });
    const noBrowser = { ...stores, domainState: { recentDomainAttempts: async () => recent.slice(0, 1) } };
    const p = await explainUrl('https://walled.example/p', config, noBrowser, undefined, now);
    expect(p.decision.action).toBe('probe');
    expect(p.decision.reason).toMatch(/simple_http's latest attempt on this domain failed \(blocked_captcha\): set aside/);
  });

  it('parses the learning flag strictly', () => {
    expect(parseLearningFlag('on')).toBe(true);
    expect(parseLearningFlag('off')).toBe(false);
    expect(parseLearningFlag(undefined)).toBeUndefined();
    expect(() => parseLearningFlag('maybe')).toThrow(/on or off/);
  });
});
