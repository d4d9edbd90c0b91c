import { describe, expect, it } from 'vitest';
import { formatManyDomainsTable, parseVariant, politenessOffEnv, type ManyDomainsRow } from './many-domains.js';
import { parseMachineCpu } from './service-stats.js';

const row = (label: string, round: number, userMs: number, inProcessMs: number): ManyDomainsRow => ({
  label, hosts: 50, round, pages: 100, ok: 100, failed: 0, userMs, inProcessMs, cpuMs: 500, pageRequests: 100, otherRequests: 0,
});

describe('many-domains report', () => {
  it('takes ratios within a round, then the median over rounds', () => {
    // Round 2 ran on a machine twice as slow: ratios stay what they were in round 1.
    const rows = [
      row('undici', 1, 1000, 800), row('crawlee', 1, 2000, 1600), row('crawlee-store', 1, 4000, 3000), row('scrapy', 1, 2400, 2000), row('ours', 1, 1600, 1000),
      row('undici', 2, 2000, 1600), row('crawlee', 2, 4000, 3200), row('crawlee-store', 2, 8000, 6000), row('scrapy', 2, 4800, 4000), row('ours', 2, 3200, 2000),
    ];
    const table = formatManyDomainsTable(rows, 50);
    const ours = table.split('\n').find((l) => l.startsWith('| ours'))!.split('|').map((c) => c.trim());
    // user-visible pages/s (median of 62.5 and 31.25), × undici 0.63, × crawlee 1.25, × crawlee-store 2.50, × scrapy 1.50;
    // in-process × undici 0.80, × crawlee 1.60
    expect(ours.slice(4, 12)).toEqual(['47', '0.63', '1.25', '2.50', '1.50', '75', '0.80', '1.60']);
    expect(ours[17]).toBe('63, 31');
    // No machine figures recorded: shown as –.
    expect(ours.slice(15, 17)).toEqual(['–', '–']);
  });

  it('shows the machine CPU per page and how busy the machine was, medians over rounds', () => {
    const rows = [
      { ...row('ours', 1, 1000, 800), machine: { busyMs: 900, totalMs: 1000 } },
      { ...row('ours', 2, 1000, 800), machine: { busyMs: 700, totalMs: 1000 } },
    ];
    const ours = formatManyDomainsTable(rows, 50).split('\n').find((l) => l.startsWith('| ours'))!.split('|').map((c) => c.trim());
    expect(ours.slice(15, 17)).toEqual(['8.0', '80%']);
  });

  it('turns per-domain politeness and robots off for every contender', () => {
    expect(politenessOffEnv(32)).toMatchObject({ DOMAIN_MAX_CONCURRENCY: '32', DOMAIN_MIN_DELAY_MS: '0', ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:32' });
  });
});

describe('parseVariant', () => {
  it('reads environment overrides and another build of crawl', () => {
    expect(parseVariant('r8:ROUTER_CONCURRENCY=8,ROUTER_DECISION_CACHE_MS=0')).toEqual({ name: 'r8', env: { ROUTER_CONCURRENCY: '8', ROUTER_DECISION_CACHE_MS: '0' }, cli: undefined });
    expect(parseVariant('base:CLI=/tmp/base/main.js')).toEqual({ name: 'base', env: {}, cli: '/tmp/base/main.js' });
    expect(() => parseVariant('no-colon')).toThrow(/NAME:K=V/);
    expect(() => parseVariant('x:=1')).toThrow(/K=V/);
  });
});

describe('parseMachineCpu', () => {
  it('counts user, nice, system, irq, softirq and steal as busy; idle and iowait only in the total', () => {
    const stat = 'cpu  100 5 50 1000 20 1 2 3 0 0\ncpu0 50 2 25 500 10 0 1 1 0 0\nintr 1\n';
    expect(parseMachineCpu(stat)).toEqual({ busy: (100 + 5 + 50 + 1 + 2 + 3) * 10, total: (161 + 1000 + 20) * 10 });
    expect(() => parseMachineCpu('intr 1\n')).toThrow(/cpu line/);
  });
});
