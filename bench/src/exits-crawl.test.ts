import { describe, expect, it } from 'vitest';
import type { SiteRequest } from '@crawler/sim-web';
import { BROWSER_COST_UNITS, BROWSER_SITE, CrawleeTierTracker, EXIT_SITES, oracleCostPerPage, oracleTier, summarizeLogs, tierOfAddress } from './exits-crawl.js';

const req = (address: string, outcome: SiteRequest['outcome'], path = '/page/0'): SiteRequest => ({ seq: 1, path, client: 'plain', atMs: 0, kind: 'static', address, outcome });

describe('the real-crawl exits bench', () => {
  it('tells the exit from the address the site saw', () => {
    expect(tierOfAddress('127.0.0.1').name).toBe('direct');
    expect(tierOfAddress('127.0.2.41').name).toBe('datacenter');
    expect(tierOfAddress('127.0.2.9').name).toBe('datacenter');
    expect(tierOfAddress('127.0.3.41').name).toBe('residential');
  });

  it('prices the oracle from the site definitions: the cheapest tier each site serves', () => {
    expect(EXIT_SITES.map((s) => oracleTier(s)?.name)).toEqual(['direct', 'direct', 'datacenter', 'datacenter', 'residential', 'residential']);
    expect(oracleCostPerPage(EXIT_SITES)).toBeCloseTo((0 + 0 + 1 + 1 + 10 + 10) / 6);
    expect(oracleTier({ name: 'none', blocked: ['127.'] })).toBeNull();
    // A site only a browser passes costs a browser page on the cheapest tier it serves.
    expect(oracleCostPerPage([...EXIT_SITES, BROWSER_SITE])).toBeCloseTo((22 + BROWSER_COST_UNITS) / 7);
  });

  it('counts cost, blocks and distinct served pages from the sites\' logs', () => {
    const s = summarizeLogs([
      [req('127.0.0.1', 'address_blocked'), req('127.0.2.41', 'address_blocked'), req('127.0.3.41', 'served'), req('127.0.3.41', 'served')],
      [req('127.0.0.1', 'served')],
    ]);
    expect(s).toEqual({ requests: 5, blocks: 2, costUnits: 1 + 10 + 10, browserRequests: 0, byTier: { direct: 2, datacenter: 1, residential: 2 }, served: 2 });
    // A browser's interstitial is a block; its page load costs a browser page on top of the exit.
    const b = summarizeLogs([[{ ...req('127.0.3.41', 'challenge'), client: 'browser' }, { ...req('127.0.3.41', 'served'), client: 'browser' }]]);
    expect([b.blocks, b.costUnits, b.browserRequests, b.served]).toEqual([1, 2 * (10 + BROWSER_COST_UNITS), 2, 1]);
  });

  it('moves a domain up a tier when a retry follows an error, and back down as the errors age (Crawlee\'s rule)', () => {
    const t = new CrawleeTierTracker(3);
    expect(t.predictTier()).toBe(0);
    t.addError(0);
    expect(t.predictTier()).toBe(1);
    t.addError(1);
    expect(t.predictTier()).toBe(2);
    const seen: number[] = [];
    for (let i = 0; i < 30; i++) seen.push(t.predictTier());
    // Tier 1's score ages to tier 2's (0) and the domain steps back down, then to direct.
    expect(seen.slice(0, 5)).toEqual([2, 2, 2, 2, 2]);
    expect(seen.at(-1)).toBe(0);
  });
});
