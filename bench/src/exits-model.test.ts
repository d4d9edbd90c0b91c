import { describe, expect, it } from 'vitest';
import { answer, learnedStrategy, mixedWeb, oracleArm, runExitModel, type ExitSite } from './exits-model.js';
import { runRoutingExits } from './routing-exits.js';

describe('the exit-routing model', () => {
  it('answers by the site\'s range rule, browsers included', () => {
    const res: ExitSite = { name: 'r', kind: 'static', minTier: 2 };
    expect(answer(res, { fetcher: 'simple_http', tier: 'direct' }, 0)).toBe('block');
    expect(answer(res, { fetcher: 'simple_http', tier: 'datacenter' }, 0)).toBe('block');
    expect(answer(res, { fetcher: 'simple_http', tier: 'residential' }, 0)).toBe('page');
    expect(oracleArm(res, 0)).toEqual({ fetcher: 'simple_http', tier: 'residential' });
    expect(oracleArm({ name: 'w', kind: 'wall', minTier: 0 }, 0)).toEqual({ fetcher: 'playwright_stealth', tier: 'direct' });
    expect(oracleArm({ name: 's', kind: 'spa', minTier: 0 }, 0)).toEqual({ fetcher: 'playwright', tier: 'direct' });
    expect(answer({ name: 'w2', kind: 'wall', minTier: 1 }, { fetcher: 'playwright_stealth', tier: 'direct' }, 0)).toBe('block');
    expect(oracleArm({ name: 'w2', kind: 'wall', minTier: 1 }, 0)).toEqual({ fetcher: 'playwright_stealth', tier: 'datacenter' });
  });

  it('learns a residential-only site and moves it back down after it lifts its block', () => {
    const site: ExitSite = { name: 'lifts', kind: 'static', minTier: 2, change: { round: 30, to: 0 } };
    const round = { value: 0 };
    const r = runExitModel([site], learnedStrategy(), { rounds: 60, pagesPerRound: 2, currentRound: round });
    expect(r.got).toBe(r.pages);
    // Direct serves the last days: the arm used at the end is the free one.
    expect(r.arms['simple_http']).toBeGreaterThan(20);
    expect(r.arms['playwright'] ?? 0).toBe(0);
  });

  it('is cheaper per page than always-top-tier and tier escalation, within 1.5× of the oracle', () => {
    const [oracle, learned, escalation, top] = runRoutingExits({ sites: 50, rounds: 60, pages: 2, seed: 7 });
    expect(oracle!.strategy).toBe('oracle');
    for (const r of [oracle!, learned!, escalation!, top!]) expect(r.got).toBe(r.pages);
    expect(learned!.costPerPage).toBeLessThan(escalation!.costPerPage);
    expect(learned!.costPerPage).toBeLessThan(top!.costPerPage);
    expect(learned!.costVsOracle!).toBeLessThan(1.5);
    expect(oracle!.blocks).toBe(0);
    expect(mixedWeb(50, 60, 7)).toHaveLength(50);
  });
});
