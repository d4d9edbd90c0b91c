import { describe, expect, it } from 'vitest';
import { FETCHERS } from '../contracts/names.js';
import { ERROR_POLICY } from '../contracts/error-codes.js';
import { showEnvValue } from '../config/env.js';
import type { FetcherScore } from '../contracts/scoring.js';
import {
  DIRECT_TIER,
  armCost,
  armKey,
  armsOf,
  escalationLadder,
  expectedCostPerSuccess,
  maskProxyUrl,
  nextArm,
  parseArmKey,
  parseProxyTiers,
  type ExitTier,
} from './exit-tiers.js';
import { rankArms } from './choose-arm.js';

const TIERS_JSON = JSON.stringify([
  { name: 'residential', cost: 10, urls: ['http://alice:s3cret@res.example:8000', 'socks5://bob:hunter2@res2.example:1080'] },
  { name: 'datacenter', cost: 1, urls: ['http://dc.example:3128'] },
]);
const HTTP = FETCHERS.simpleHttp;
const STEALTH = FETCHERS.playwrightStealth;
const PW = FETCHERS.playwright;

function tiers(): ExitTier[] {
  return parseProxyTiers(TIERS_JSON, { direct: true });
}

function score(fetcher: string, successRate: number, sampleSize = 20): FetcherScore {
  const confidence = successRate * Math.min(1, sampleSize / 10);
  return { fetcher, sampleSize, decayedSuccesses: successRate * sampleSize, successRate, sampleFactor: Math.min(1, sampleSize / 10), confidence, eligible: sampleSize >= 5 };
}

describe('parseProxyTiers', () => {
  it('adds direct at cost 0 and orders tiers by cost', () => {
    expect(tiers().map((t) => [t.name, t.cost])).toEqual([
      [DIRECT_TIER, 0],
      ['datacenter', 1],
      ['residential', 10],
    ]);
    expect(parseProxyTiers(TIERS_JSON, { direct: false }).map((t) => t.name)).toEqual(['datacenter', 'residential']);
    expect(parseProxyTiers('', { direct: true })).toEqual([{ name: DIRECT_TIER, cost: 0, urls: [] }]);
  });

  it('refuses bad tiers without quoting a credential', () => {
    const bad = [
      JSON.stringify([{ name: 'x', cost: 1, urls: ['ftp://alice:s3cret@h:1'] }]),
      JSON.stringify([{ name: 'x', cost: -1, urls: ['http://alice:s3cret@h:1'] }]),
      JSON.stringify([{ name: 'x', cost: 1, urls: ['socks5://alice:s3cret@h'] }]),
      JSON.stringify([{ name: 'x', cost: 1, urls: [] }]),
      JSON.stringify([{ name: 'direct', cost: 1, urls: ['http://h:1'] }]),
      JSON.stringify([{ name: 'a', cost: 1, urls: ['http://h:1'] }, { name: 'a', cost: 2, urls: ['http://h:2'] }]),
      '[{"name":"x","cost":1,"urls":["http://alice:s3cret@h:1"]',
    ];
    for (const json of bad) {
      let message = '';
      try {
        parseProxyTiers(json, { direct: true });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, json).not.toBe('');
      expect(message).not.toContain('s3cret');
      expect(message).not.toContain('alice');
    }
    expect(() => parseProxyTiers('[]', { direct: false })).toThrow(/no exit tier/);
  });

  it('says a proxy URL written without its scheme needs one, without echoing its credentials', () => {
    for (const url of ['dc1.example:3128', '10.0.0.1:3128', 'alice:s3cret@dc1.example:3128']) {
      let message = '';
      try {
        parseProxyTiers(JSON.stringify([{ name: 'x', cost: 1, urls: [url] }]), { direct: true });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, url).toMatch(/no scheme: a proxy URL starts with http:\/\/, https:\/\/ or socks5:\/\//);
      expect(message, url).not.toMatch(/s3cret|alice|dc1\.example:\/\//);
    }
  });

  it("refuses at start-up a credential whose '%' starts no percent-encoding, and reads encoded ones back", () => {
    // Every request through such a URL would fail with "URI malformed", blamed on the site.
    for (const url of ['http://alice:50%off@h:1', 'socks5://al%ice:pw@h:1080']) {
      expect(() => parseProxyTiers(JSON.stringify([{ name: 'x', cost: 1, urls: [url] }]), { direct: true }), url).toThrow(/%25/);
      try {
        parseProxyTiers(JSON.stringify([{ name: 'x', cost: 1, urls: [url] }]), { direct: true });
      } catch (err) {
        expect((err as Error).message).not.toMatch(/alice|50%off|al%ice/);
      }
    }
    const ok = parseProxyTiers(JSON.stringify([{ name: 'x', cost: 1, urls: ['http://us%40er:p%40ss%3Aw%25rd@h:1'] }]), { direct: true });
    expect(ok[1]!.urls).toEqual(['http://us%40er:p%40ss%3Aw%25rd@h:1']);
  });

  it('masks a proxy URL and a PROXY variable shown in a config error', () => {
    expect(maskProxyUrl('http://alice:s3cret@res.example:8000')).toBe('http://***@res.example:8000');
    expect(maskProxyUrl('socks5://res.example:1080')).toBe('socks5://res.example:1080');
    expect(maskProxyUrl('not a url alice:s3cret@x')).not.toContain('s3cret');
    const shown = showEnvValue('PROXY_TIERS', TIERS_JSON);
    expect(shown).not.toContain('s3cret');
    expect(shown).not.toContain('hunter2');
    expect(shown).not.toContain('alice');
  });

  it('masks the credentials of a proxy URL written without its scheme, when the variable is shown in an error', () => {
    const json = JSON.stringify([{ name: 'dc', cost: 1, urls: ['alice:s3cret@dc1.example:3128', 'bob:p@ss@dc2.example:3128', 'http://carol:pw@dc3.example:1'] }]);
    const shown = showEnvValue('PROXY_TIERS', json);
    for (const secret of ['alice', 's3cret', 'bob', 'p@ss', 'ss@', 'carol', ':pw@']) expect(shown, secret).not.toContain(secret);
    // The hosts stay, so the operator sees which entry is meant; text without credentials is left alone.
    expect(shown).toContain('dc1.example:3128');
    expect(shown).toContain('dc2.example:3128');
    expect(showEnvValue('PROXY_TIERS', '[{"name":"dc","cost":1,"urls":["mail@example.com"]}]')).toContain('mail@example.com');
  });
});

describe('arms and costs', () => {
  it('keys direct arms by the fetcher alone so old attempts count for them', () => {
    expect(armKey({ fetcher: HTTP, tier: DIRECT_TIER })).toBe(HTTP);
    expect(armKey({ fetcher: HTTP, tier: 'residential' })).toBe('simple_http@residential');
    expect(parseArmKey('simple_http@residential')).toEqual({ fetcher: HTTP, tier: 'residential' });
    expect(parseArmKey(STEALTH)).toEqual({ fetcher: STEALTH, tier: DIRECT_TIER });
  });

  it('prices an arm as fetcher CPU plus tier cost, per success', () => {
    expect(armCost({ fetcher: HTTP, tier: 'residential' }, tiers())).toBeCloseTo(10.01);
    expect(armCost({ fetcher: STEALTH, tier: DIRECT_TIER }, tiers())).toBeCloseTo(1.5);
    expect(armCost({ fetcher: HTTP, tier: 'gone' }, tiers())).toBe(Number.POSITIVE_INFINITY);
    expect(expectedCostPerSuccess(2, 0.5)).toBe(4);
    expect(expectedCostPerSuccess(2, 0)).toBe(Number.POSITIVE_INFINITY);
  });

  it('puts every fetcher on every tier, cheapest first, unless browsers are held to direct', () => {
    const arms = armsOf([HTTP, STEALTH], tiers()).map(armKey);
    expect(arms).toEqual(['simple_http', 'simple_http@datacenter', 'playwright_stealth', 'playwright_stealth@datacenter', 'simple_http@residential', 'playwright_stealth@residential']);
    expect(armsOf([HTTP, STEALTH], tiers(), { browsersProxied: false }).map(armKey)).toEqual(['simple_http', 'simple_http@datacenter', 'playwright_stealth', 'simple_http@residential']);
  });

  it('climbs plain HTTP through the tiers, then the stealth browser through them, and never down', () => {
    const ladder = escalationLadder([HTTP, PW, STEALTH], tiers());
    expect(ladder.map(armKey)).toEqual(['simple_http', 'simple_http@datacenter', 'simple_http@residential', 'playwright_stealth', 'playwright_stealth@datacenter', 'playwright_stealth@residential']);
    expect(nextArm(ladder, { fetcher: HTTP, tier: DIRECT_TIER }, tiers())).toEqual({ fetcher: HTTP, tier: 'datacenter' });
    expect(nextArm(ladder, { fetcher: HTTP, tier: 'residential' }, tiers())).toEqual({ fetcher: STEALTH, tier: DIRECT_TIER });
    expect(nextArm(ladder, { fetcher: STEALTH, tier: 'residential' }, tiers())).toBeNull();
    // The ordinary browser blocked goes to stealth on its own tier, not to plain HTTP through residential.
    expect(nextArm(ladder, { fetcher: PW, tier: DIRECT_TIER }, tiers())).toEqual({ fetcher: STEALTH, tier: DIRECT_TIER });
    expect(nextArm(ladder, { fetcher: PW, tier: 'datacenter' }, tiers())).toEqual({ fetcher: STEALTH, tier: 'datacenter' });
    expect(escalationLadder([HTTP, PW], tiers(), { browsersProxied: false }).map(armKey)).toEqual(['simple_http', 'simple_http@datacenter', 'simple_http@residential', 'playwright']);
  });
});

describe('rankArms', () => {
  it('picks the cheapest confident arm, not the most confident one', () => {
    const r = rankArms([score(STEALTH, 0.95), score('simple_http@residential', 0.9), score('simple_http@datacenter', 0.85), score(HTTP, 0.1)], tiers(), { confidenceThreshold: 0.6 });
    // datacenter HTTP: 1.01 / 0.85 ≈ 1.19; stealth direct: 1.5 / 0.95 ≈ 1.58; residential: 10.01 / 0.9 ≈ 11.1
    expect(armKey(r.best!.arm)).toBe('simple_http@datacenter');
    expect(r.arms.map((a) => armKey(a.arm))).toEqual(['simple_http@datacenter', 'playwright_stealth', 'simple_http@residential', 'simple_http']);
    expect(r.arms.at(-1)!.confident).toBe(false);
  });

  it('chooses nothing when no arm is confident, and drops arms of unknown tiers', () => {
    const r = rankArms([score(HTTP, 0.5), score('simple_http@gone', 1)], tiers(), { confidenceThreshold: 0.6 });
    expect(r.best).toBeNull();
    expect(r.arms.map((a) => armKey(a.arm))).toEqual([HTTP]);
    expect(rankArms([score(HTTP, 1, 3)], tiers(), { confidenceThreshold: 0.2 }).best).toBeNull();
  });

  it('leaves out arms the fleet does not run', () => {
    const r = rankArms([score(STEALTH, 1), score('simple_http@residential', 0.9)], tiers(), { confidenceThreshold: 0.6, runs: (a) => a.fetcher === HTTP });
    expect(armKey(r.best!.arm)).toBe('simple_http@residential');
  });
});

describe('proxy_unavailable', () => {
  it('is retried, never logged as an attempt, and no evidence', () => {
    expect(ERROR_POLICY.proxy_unavailable).toMatchObject({ action: 'retry_now', toolEvidence: false, loggedAsAttempt: false, banRisk: false });
  });
});
