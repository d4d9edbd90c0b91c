import { describe, expect, it } from 'vitest';
import { buildStatsReport, formatStatsReport, formatTable } from './stats.js';

const hour = (h: number) => new Date(Date.UTC(2026, 10, 22, h));

describe('buildStatsReport', () => {
  it('sums decisions over the window and counts each learned decision as a probe saved', () => {
    const r = buildStatsReport({
      sinceDays: 7,
      velocityHours: 24,
      byFetcher: [],
      byDomain: [],
      queues: {},
      velocity: [
        { bucketStart: hour(1), attempts: 10, learned: 0, probes: 10, learnedShare: 0 },
        { bucketStart: hour(2), attempts: 10, learned: 6, probes: 4, learnedShare: 0.6 },
      ],
    });
    expect(r.decisions).toEqual({ attempts: 20, learned: 6, probes: 14, learnedShare: 0.3, probesSaved: 6 });
    expect(r.velocity.map((b) => b.probesSaved)).toEqual([0, 6]);
  });

  it('prices each exit tier: attempts × the tier cost', () => {
    const t = (key: string, attempts: number) => ({ key, attempts, successes: attempts, banned: 0, successRate: 1, banRate: 0 });
    const tiers = [{ name: 'direct', cost: 0, urls: [] }, { name: 'residential', cost: 10, urls: ['http://u:p@h:1'] }];
    const r = buildStatsReport({ sinceDays: 7, velocityHours: 24, byFetcher: [], byDomain: [], byTier: [t('direct', 5), t('residential', 3), t('retired', 2)], tiers, queues: {}, velocity: [] });
    expect(r.byTier.map((x) => [x.key, x.costUnits])).toEqual([['direct', 0], ['residential', 30], ['retired', null]]);
    const text = formatStatsReport(r);
    expect(text).toMatch(/By exit tier.*\n.*\n.*\ndirect\s+5\s+100\.0%\s+0\.0%\s+0\nresidential\s+3\s+100\.0%\s+0\.0%\s+30\nretired\s+2\s+100\.0%\s+0\.0%\s+n\/a/);
    expect(text).not.toContain('u:p');
  });

  it('lists each proxy masked with its tier, rates and cost, busiest first', () => {
    const tiers = [{ name: 'direct', cost: 0, urls: [] }, { name: 'datacenter', cost: 1, urls: ['http://dcUser:dcPass@127.0.0.1:8001'] }, { name: 'residential', cost: 10, urls: ['socks5://u:p@127.0.0.1:9001'] }];
    const p = (tier: string, key: string, attempts: number, banned: number) => ({ tier, key, attempts, successes: attempts - banned, banned, successRate: (attempts - banned) / attempts, banRate: banned / attempts });
    const r = buildStatsReport({
      sinceDays: 7, velocityHours: 24, byFetcher: [], byDomain: [], tiers, queues: {}, velocity: [],
      byProxy: [p('residential', 'socks5://***@127.0.0.1:9001', 8, 0), p('datacenter', 'http://***@127.0.0.1:8001', 4, 2), p('gone', 'http://127.0.0.1:7000', 1, 0)],
    });
    expect(r.byProxy.map((x) => x.costUnits)).toEqual([80, 4, null]);
    const text = formatStatsReport(r);
    expect(text).toMatch(/By proxy.*\n.*\n.*\nsocks5:\/\/\*\*\*@127\.0\.0\.1:9001\s+residential\s+8\s+100\.0%\s+0\.0%\s+80\nhttp:\/\/\*\*\*@127\.0\.0\.1:8001\s+datacenter\s+4\s+50\.0%\s+50\.0%\s+4\nhttp:\/\/127\.0\.0\.1:7000\s+gone\s+1\s+100\.0%\s+0\.0%\s+n\/a/);
    expect(text).not.toContain('dcPass');
    expect(formatStatsReport(buildStatsReport({ sinceDays: 7, velocityHours: 24, byFetcher: [], byDomain: [], queues: {}, velocity: [] }))).toContain('By proxy (last 7 days)\n  (no proxied attempts)');
  });

  it('reports a zero share, not NaN, without attempts', () => {
    const r = buildStatsReport({ sinceDays: 1, velocityHours: 1, byFetcher: [], byDomain: [], queues: {}, velocity: [] });
    expect(r.decisions.learnedShare).toBe(0);
    expect(formatStatsReport(r)).toContain('(no attempts)');
    expect(formatStatsReport(r)).toContain('Paused domains\n  (none)');
    const paused = buildStatsReport({ sinceDays: 1, velocityHours: 1, byFetcher: [], byDomain: [], queues: {}, velocity: [], paused: [{ domain: 'shop.example', reason: 'blocked_403', until: '2026-11-30T12:00:00.000Z', domainPausedUntil: null, pausedLinks: 4 }] });
    expect(formatStatsReport(paused)).toMatch(/Paused domains.*\n.*\n.*\nshop\.example\s+blocked_403\s+-\s+2026-11-30T12:00:00\.000Z\s+4/);
    const site = buildStatsReport({ sinceDays: 1, velocityHours: 1, byFetcher: [], byDomain: [], queues: {}, velocity: [], paused: [{ domain: 'shop.example', reason: 'rate_limited', until: '2026-11-30T12:00:09.000Z', domainPausedUntil: '2026-11-30T12:00:00.000Z', pausedLinks: 10 }] });
    expect(formatStatsReport(site)).toMatch(/domain\s+reason\s+domain paused until\s+last link resumes\s+paused links\n.*\nshop\.example\s+rate_limited\s+2026-11-30T12:00:00\.000Z\s+2026-11-30T12:00:09\.000Z\s+10/);
  });
});

describe('formatTable', () => {
  it('pads the first column left and the others right, under a rule', () => {
    expect(formatTable(['fetcher', 'attempts'], [['simple_http', 12], ['playwright', 3]]).split('\n')).toEqual([
      'fetcher      attempts',
      '-----------  --------',
      'simple_http        12',
      'playwright          3',
    ]);
  });
});

describe('formatStatsReport', () => {
  it('shows rates as percentages, queue depths and the hourly velocity', () => {
    const text = formatStatsReport(
      buildStatsReport({
        sinceDays: 7,
        velocityHours: 24,
        byFetcher: [{ key: 'simple_http', attempts: 4, successes: 3, banned: 1, successRate: 0.75, banRate: 0.25 }],
        byDomain: [{ key: 'a.example', attempts: 4, successes: 3, banned: 1, successRate: 0.75, banRate: 0.25 }],
        queues: { route: { waiting: 2, active: 0, delayed: 1, failed: 0 } },
        velocity: [{ bucketStart: hour(3), attempts: 4, learned: 1, probes: 3, learnedShare: 0.25 }],
      }),
    );
    expect(text).toMatch(/simple_http\s+4\s+75\.0%\s+25\.0%/);
    expect(text).toMatch(/a\.example\s+4\s+75\.0%\s+25\.0%/);
    expect(text).toMatch(/route\s+2\s+0\s+1\s+0/);
    expect(text).toMatch(/2026-11-22 03:00\s+4\s+1\s+3\s+25\.0%\s+1/);
    expect(text).toContain('4 attempts, 25.0% learned, 3 probes, 1 probes saved');
  });
});

describe('what the fleet is doing now, and what it still has to do', () => {
  const a = (key: string, attempts: number, successes: number, banned = 0) => ({ key, attempts, successes, banned, successRate: successes / attempts, banRate: banned / attempts });

  it('shows the last minutes per fetcher with rates per second, and failures by error type', () => {
    const r = buildStatsReport({
      sinceDays: 7, velocityHours: 24, byFetcher: [], byDomain: [], queues: {}, velocity: [],
      recent: { minutes: 5, byFetcher: [a('simple_http', 600, 540, 6), a('playwright', 60, 30)], errors: [a('network_error', 50, 0), a('rate_limited', 6, 0)] },
    });
    const text = formatStatsReport(r);
    expect(text).toMatch(/Last 5 minutes.*\n.*\n.*\nsimple_http\s+600\s+2\.00\s+1\.80\s+90\.0%\s+1\.0%\nplaywright\s+60\s+0\.20\s+0\.10\s+50\.0%\s+0\.0%\nall\s+660\s+2\.20\s+1\.90\s+86\.4%\s+0\.9%\n  errors: network_error 50 \(0\.17\/s\), rate_limited 6 \(0\.02\/s\)/);
    const idle = formatStatsReport(buildStatsReport({ sinceDays: 7, velocityHours: 24, byFetcher: [], byDomain: [], queues: {}, velocity: [], recent: { minutes: 5, byFetcher: [], errors: [] } }));
    expect(idle).toContain('Last 5 minutes (all workers, from the attempt log)\n  (no attempts: nothing fetched in 5 minutes)');
  });

  it('shows the unfinished links by status and the domains holding most of them', () => {
    const r = buildStatsReport({
      sinceDays: 7, velocityHours: 24, byFetcher: [], byDomain: [], queues: {}, velocity: [],
      backlog: {
        total: 31, byStatus: { queued: 10, routing: 0, fetching: 1, paused: 20 },
        topDomains: [{ domain: 'slow.example', total: 25, queued: 5, routing: 0, fetching: 0, paused: 20 }, { domain: 'a.example', total: 6, queued: 5, routing: 0, fetching: 1, paused: 0 }],
      },
    });
    expect(r.backlog?.total).toBe(31);
    const text = formatStatsReport(r);
    expect(text).toContain('Backlog: 31 unfinished links (queued 10, routing 0, fetching 1, paused 20)');
    expect(text).toContain('(fetching = routed to its fetcher: being fetched, or waiting for its site\'s politeness turn)');
    expect(text).toMatch(/domain\s+unfinished\s+queued\s+routing\s+fetching\s+paused\n.*\nslow\.example\s+25\s+5\s+0\s+0\s+20\na\.example\s+6\s+5\s+0\s+1\s+0/);
  });
});
