import { describe, expect, it } from 'vitest';
import type { SiteRequest } from '@crawler/sim-web';
import { computeStrategyMetrics, type CrawledPage } from './routing-metrics.js';
import { buildRoutingScenario, oracleRoute, scenarioKindAt } from './routing-scenario.js';
import { formatRoutingReport, warmRatioToOracle } from './routing-report.js';

const DAY = 86_400_000;
let seq = 0;
const req = (path: string, day: number, client: 'plain' | 'browser', kind: SiteRequest['kind'], outcome: SiteRequest['outcome']): SiteRequest => ({ seq: ++seq, path, atMs: day * DAY, client, kind, outcome });

describe('computeStrategyMetrics', () => {
  const pages: CrawledPage[] = [
    { domain: 'a', path: '/page/0', round: 0 },
    { domain: 'a', path: '/page/1', round: 1 },
    { domain: 'a', path: '/page/2', round: 2 },
    { domain: 'a', path: '/page/3', round: 3 },
    { domain: 'b', path: '/page/0', round: 0 },
    { domain: 'b', path: '/page/1', round: 1 },
  ];
  const logs = new Map<string, SiteRequest[]>([
    [
      'a',
      [
        req('/page/0', 0, 'plain', 'static', 'served'),
        // The site put up a wall on day 10: plain HTTP blocked, then a browser got through, then one request each.
        req('/page/1', 10, 'plain', 'botwall', 'challenge'),
        req('/page/1', 10, 'browser', 'botwall', 'served'),
        req('/page/2', 20, 'browser', 'botwall', 'served'),
        req('/page/3', 30, 'browser', 'botwall', 'served'),
      ],
    ],
    ['b', [req('/page/0', 0, 'plain', 'spa', 'shell'), req('/page/0', 0, 'browser', 'spa', 'served'), req('/page/1', 10, 'plain', 'ratelimit', 'rate_limited')]],
  ]);
  const m = computeStrategyMetrics({ pages, logs, changes: [{ domain: 'a', name: 'a', from: 'static', to: 'botwall', atMs: 10 * DAY }], warmFromRound: 2 });

  it('counts pages served by their site, requests and browser loads per served page, and blocks', () => {
    expect(m).toMatchObject({ pages: 6, served: 5, blocks: 2 });
    expect(m.successRate).toBeCloseTo(5 / 6);
    expect(m.requestsPerPage).toBeCloseTo(8 / 5);
    expect(m.browserLoadsPerPage).toBeCloseTo(4 / 5);
  });

  it('measures the warm rounds on their own', () => {
    expect(m.warm).toMatchObject({ pages: 2, served: 2, requestsPerPage: 1, browserLoadsPerPage: 1, blocks: 0 });
  });

  it('adaptation: pages after the change until an unbroken run of one-request ideal pages', () => {
    expect(m.adaptation).toEqual([{ site: 'a', change: 'static→botwall', pagesToAdapt: 1, daysToAdapt: 10, pagesAfterChange: 3 }]);
  });

  it('a site that never settles has not adapted, and a page never requested breaks the run', () => {
    const never = computeStrategyMetrics({
      pages: [...pages, { domain: 'a', path: '/page/4', round: 4 }],
      logs,
      changes: [{ domain: 'a', name: 'a', from: 'static', to: 'botwall', atMs: 10 * DAY }],
      warmFromRound: 2,
    });
    expect(never.adaptation[0]).toMatchObject({ pagesToAdapt: null, daysToAdapt: null, pagesAfterChange: 4 });
  });
});

describe('routing scenario', () => {
  const s = buildRoutingScenario({ startMs: 0 });
  it('has at least 50 domains of every kind, some changing kind on a round boundary', () => {
    expect(s.sites.length).toBeGreaterThanOrEqual(50);
    expect(new Set(s.sites.map((x) => x.spec.kind))).toEqual(new Set(['static', 'spa', 'botwall', 'interstitial', 'ratelimit', 'files']));
    const changing = s.sites.filter((x) => x.changes.length > 0);
    expect(changing).toHaveLength(9);
    for (const c of changing.flatMap((x) => x.changes)) expect((c.atMs / DAY) % s.daysPerRound).toBe(0);
  });
  it('the oracle follows a change of kind', () => {
    const wall = s.sites.find((x) => x.changes[0]?.kind === 'botwall')!;
    const at = wall.changes[0]!.atMs;
    expect(oracleRoute(wall, at - 1)).toBe('simple_http');
    expect(oracleRoute(wall, at)).toBe('playwright_stealth');
    expect(scenarioKindAt(wall, at)).toBe('botwall');
  });
  it('rate limits: rate-limiting sites tolerate exactly one request per page of a round', () => {
    const rl = s.sites.filter((x) => x.spec.kind === 'ratelimit');
    expect(rl.every((x) => x.spec.rateLimit?.maxRequests === s.pagesPerRound)).toBe(true);
  });
});

describe('routing report', () => {
  it('prints a row per strategy with the warm ratio to the oracle', () => {
    const s = buildRoutingScenario({ startMs: 0, rounds: 5 });
    const metrics = (rpp: number) => ({ pages: 10, served: 10, successRate: 1, requestsPerPage: rpp, browserLoadsPerPage: 0, blocks: 0, warm: { pages: 8, served: 8, requestsPerPage: rpp, browserLoadsPerPage: 0, blocks: 0 }, adaptation: [] });
    const runs = [
      { strategy: 'oracle', describe: '', metrics: metrics(1), crawlerDone: 10, wallMs: 1000 },
      { strategy: 'learning', describe: '', metrics: metrics(1.1), crawlerDone: 10, wallMs: 1000 },
    ];
    expect(warmRatioToOracle(runs, 'learning')).toBeCloseTo(1.1);
    const out = formatRoutingReport(s, runs);
    expect(out).toMatch(/\| learning \| 10 \| 10 \| 100\.0% \| 1\.10 .*\(1\.10×\)/);
  });
});
