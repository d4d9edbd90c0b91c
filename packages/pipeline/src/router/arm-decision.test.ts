import { describe, expect, it } from 'vitest';
import { parseProxyTiers, type BestFetcherResult, type DomainAttempt, type FetcherScore } from '@crawler/core';
import { response } from '../__fixtures__/fakes.js';
import { decideRoute, type DecisionSettings, type RouteFacts } from './route-decision.js';
import { armView, escalatedArm } from './arm-choice.js';

// The router's choice over (fetcher, exit tier) arms, from facts alone.

const NOW = new Date('2026-05-01T12:00:00Z');
const KNOWN = new Set(['simple_http', 'playwright', 'playwright_stealth']);
const TIERS = parseProxyTiers(
  JSON.stringify([
    { name: 'datacenter', cost: 1, urls: ['http://u:p@dc.example:3128'] },
    { name: 'residential', cost: 10, urls: ['http://u:p@res.example:8000'] },
  ]),
  { direct: true },
);
const SETTINGS: DecisionSettings = { learningModeEnabled: true, known: KNOWN, confidenceThreshold: 0.6, domainMemory: true, exitTiers: TIERS };
const LINK = { id: 'l1', status: 'queued', pausedUntil: null, generation: 1, learningModeEnabled: null, riskLevel: 0, lastAttemptAt: null };

function score(fetcher: string, rate: number, n = 20): FetcherScore {
  return { fetcher, sampleSize: n, decayedSuccesses: n * rate, successRate: rate, sampleFactor: Math.min(1, n / 10), confidence: rate * Math.min(1, n / 10), eligible: n >= 5 };
}
function learned(...scores: FetcherScore[]): BestFetcherResult {
  return { best: [...scores].sort((a, b) => b.confidence - a.confidence)[0] ?? null, scores };
}
function facts(over: Partial<RouteFacts> = {}): RouteFacts {
  return { now: NOW, settings: SETTINGS, domain: 'ranges.example', generation: 1, link: LINK, cached: null, ...over };
}

describe('decideRoute over arms', () => {
  it('takes the cheapest confident arm: plain HTTP through residential over a more confident stealth browser when it costs less per page', () => {
    // stealth direct 1.5 / 0.95 ≈ 1.58 per page; residential HTTP 10.01 / 0.9 ≈ 11.1: the browser is cheaper here.
    const a = decideRoute(facts({ learned: { learned: learned(score('playwright_stealth', 0.95), score('simple_http@residential', 0.9)), recent: [] } }));
    expect(a).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright_stealth', source: 'learned' } });
    expect((a as { decision: object }).decision).not.toHaveProperty('exitTier');
    // datacenter HTTP 1.01 / 0.8 ≈ 1.26 per page beats the browser.
    const b = decideRoute(facts({ learned: { learned: learned(score('playwright_stealth', 0.95), score('simple_http@datacenter', 0.8)), recent: [] } }));
    expect(b).toMatchObject({ kind: 'route', decision: { fetcher: 'simple_http', exitTier: 'datacenter', source: 'learned' } });
  });

  it('keeps a site that works direct on direct, and moves one back down once the direct arm is confident again', () => {
    const open = decideRoute(facts({ learned: { learned: learned(score('simple_http', 0.9), score('simple_http@residential', 1)), recent: [] }, wall: null }));
    expect(open).toMatchObject({ kind: 'route', decision: { fetcher: 'simple_http', source: 'learned' } });
    expect((open as { decision: object }).decision).not.toHaveProperty('exitTier');
  });

  it('without proxied tiers, keeps the most confident direct fetcher and ignores arms of tiers no longer configured', () => {
    const direct = { ...SETTINGS, exitTiers: undefined };
    const s = decideRoute(facts({ settings: direct, learned: { learned: learned(score('simple_http@residential', 1), score('playwright', 0.9), score('simple_http', 0.7)), recent: [] } }));
    expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright', source: 'learned' } });
    expect(armView(learned(score('simple_http@residential', 1)), { known: KNOWN, confidenceThreshold: 0.6 }).learned).toEqual({ best: null, scores: [] });
  });

  it('chooses a browser through a proxy when that is the cheapest arm that works', () => {
    // stealth through datacenter 2.5 / 1 per page; plain HTTP through residential 10.01 / 0.9.
    const s = decideRoute(facts({ learned: { learned: learned(score('playwright_stealth@datacenter', 1), score('simple_http@residential', 0.9)), recent: [] } }));
    expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'playwright_stealth', exitTier: 'datacenter', source: 'learned' } });
    // A fleet that runs no browser never gets one, whatever the score.
    const httpOnly = { ...SETTINGS, known: new Set(['simple_http']) };
    expect(decideRoute(facts({ settings: httpOnly, learned: { learned: learned(score('playwright_stealth@datacenter', 1), score('simple_http@residential', 0.9)), recent: [] } }))).toMatchObject({
      kind: 'route', decision: { fetcher: 'simple_http', exitTier: 'residential' },
    });
  });

  it('re-routes a blocked link to the next arm the retry policy named, and keeps it from the refused arm only', () => {
    expect(decideRoute(facts({ escalateTo: 'simple_http@residential', avoid: 'simple_http@datacenter' }))).toMatchObject({
      kind: 'route', decision: { fetcher: 'simple_http', exitTier: 'residential', source: 'retry' },
    });
    // Blocked direct: the residential arm is still allowed.
    const s = decideRoute(facts({ avoid: 'simple_http', learned: { learned: learned(score('simple_http', 0.9), score('simple_http@residential', 0.9)), recent: [] } }));
    expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'simple_http', exitTier: 'residential' } });
  });

  it('sends a probe that met a wall one rung up the ladder (plain HTTP through datacenter), not to a browser', () => {
    const blocked = { response: response('https://ranges.example/a', { status: 403, body: '<html><head><title>Just a moment...</title></head><body>Checking your browser before accessing. cf-chl challenge-platform</body></html>' }), answeredAt: NOW };
    const s = decideRoute(facts({ learned: { learned: { best: null, scores: [] }, recent: [] }, wall: null, robots: { allowed: true }, gate: { granted: true }, probe: blocked }));
    expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'simple_http', exitTier: 'datacenter', source: 'probe' }, effects: [{ kind: 'recordWall', fetcher: 'simple_http@datacenter' }] });
    // The wall memory then sends the domain's other URLs there without a probe.
    const next = decideRoute(facts({ learned: { learned: { best: null, scores: [] }, recent: [] }, wall: { fetcher: 'simple_http@datacenter', reason: 'blocked_captcha' } }));
    expect(next).toMatchObject({ kind: 'route', decision: { fetcher: 'simple_http', exitTier: 'datacenter', source: 'domain_memory' } });
  });

  it('remembers the arm that last worked on the domain when there is too little evidence for a score', () => {
    const at = (m: number) => new Date(NOW.getTime() - m * 60_000);
    const recent: DomainAttempt[] = [
      { fetcher: 'simple_http@residential', success: true, isBanned: false, errorType: null, selectionSource: 'retry', attemptedAt: at(1) },
      { fetcher: 'simple_http@datacenter', success: false, isBanned: true, errorType: 'blocked_captcha', selectionSource: 'probe', attemptedAt: at(2) },
      { fetcher: 'simple_http', success: false, isBanned: true, errorType: 'blocked_captcha', selectionSource: 'probe', attemptedAt: at(3) },
    ];
    const s = decideRoute(facts({ learned: { learned: { best: null, scores: [] }, recent } }));
    expect(s).toMatchObject({ kind: 'route', decision: { fetcher: 'simple_http', exitTier: 'residential', source: 'domain_memory' } });
  });
});

describe('escalatedArm', () => {
  it('climbs plain HTTP through the tiers, then the stealth browser from direct up; nothing without proxied tiers', () => {
    const s = { known: KNOWN, confidenceThreshold: 0.6, exitTiers: TIERS };
    expect(escalatedArm(s, { fetcher: 'simple_http', tier: 'direct' })).toEqual({ fetcher: 'simple_http', tier: 'datacenter' });
    expect(escalatedArm(s, { fetcher: 'simple_http', tier: 'residential' })).toEqual({ fetcher: 'playwright_stealth', tier: 'direct' });
    expect(escalatedArm({ known: KNOWN, confidenceThreshold: 0.6 }, { fetcher: 'simple_http', tier: 'direct' })).toBeNull();
  });
});
