import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../contracts/clock.js';
import { isDisqualified, needsReverification, rememberedFetcher, summarizeDomainAttempts, type DomainAttempt } from './domain-memory.js';

const now = new Date('2026-06-01T00:00:00Z');
const at = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY_MS);
const a = (fetcher: string, daysAgo: number, success: boolean, extra: Partial<DomainAttempt> = {}): DomainAttempt => ({
  fetcher,
  success,
  isBanned: false,
  errorType: success ? null : 'timeout',
  selectionSource: 'probe',
  attemptedAt: at(daysAgo),
  ...extra,
});

describe('domain memory', () => {
  it('summarises per canonical fetcher: latest outcome, latest success, latest verified success', () => {
    const s = summarizeDomainAttempts([
      a('playwright', 10, true, { selectionSource: 'probe' }),
      a('playwright', 2, true, { selectionSource: 'domain_memory' }),
      a('direct_access', 5, true),
      a('playwright', 1, false, { errorType: 'empty_content' }),
    ]);
    const pw = s.get('playwright')!;
    expect(pw).toMatchObject({ attempts: 3, successes: 2, lastSuccessAt: at(2), lastVerifiedAt: at(10) });
    expect(pw.last).toMatchObject({ success: false, errorType: 'empty_content' });
    expect(s.get('simple_http')?.attempts).toBe(1);
  });

  it('disqualifies a fetcher whose latest attempt was banned or the wrong tool, until it works again', () => {
    expect(isDisqualified(summarizeDomainAttempts([a('playwright', 1, false, { isBanned: true, errorType: 'blocked_captcha' })]).get('playwright'))).toBe(true);
    expect(isDisqualified(summarizeDomainAttempts([a('simple_http', 1, false, { errorType: 'wrong_tool' })]).get('simple_http'))).toBe(true);
    expect(isDisqualified(summarizeDomainAttempts([a('playwright', 3, false, { isBanned: true }), a('playwright', 1, true)]).get('playwright'))).toBe(false);
    expect(isDisqualified(summarizeDomainAttempts([a('playwright', 1, false)]).get('playwright'))).toBe(false);
    expect(isDisqualified(undefined)).toBe(false);
  });

  it('leaves rate-limited attempts out: a 429 is no evidence against the fetcher', () => {
    const s = summarizeDomainAttempts([a('playwright', 2, true), a('playwright', 1, false, { isBanned: true, errorType: 'rate_limited' })]);
    expect(s.get('playwright')).toMatchObject({ attempts: 1, successes: 1, last: { success: true } });
    expect(isDisqualified(s.get('playwright'))).toBe(false);
    expect(rememberedFetcher(s, now)?.fetcher).toBe('playwright');
    expect(summarizeDomainAttempts([a('simple_http', 1, false, { isBanned: true, errorType: 'rate_limited' })]).size).toBe(0);
  });

  it('asks for a new probe when a browser was last shown necessary more than its period ago', () => {
    const fresh = summarizeDomainAttempts([a('playwright', 20, true)]).get('playwright');
    const stale = summarizeDomainAttempts([a('playwright', 22, true), a('playwright', 1, true, { selectionSource: 'learned' })]).get('playwright');
    expect(needsReverification(fresh, now)).toBe(false);
    expect(needsReverification(stale, now)).toBe(true);
    expect(needsReverification(summarizeDomainAttempts([a('playwright_stealth', 40, true)]).get('playwright_stealth'), now)).toBe(false);
    expect(needsReverification(summarizeDomainAttempts([a('simple_http', 400, true)]).get('simple_http'), now)).toBe(false);
    expect(needsReverification(summarizeDomainAttempts([a('playwright', 1, true, { selectionSource: 'learned' })]).get('playwright'), now)).toBe(true);
  });

  it('remembers the domain\'s latest working browser, and nothing for a plain-HTTP site', () => {
    expect(rememberedFetcher(summarizeDomainAttempts([a('simple_http', 9, false, { isBanned: true, errorType: 'blocked_captcha' }), a('playwright_stealth', 9, true, { selectionSource: 'retry' })]), now)?.fetcher).toBe('playwright_stealth');
    expect(rememberedFetcher(summarizeDomainAttempts([a('playwright', 20, true), a('simple_http', 3, true)]), now)).toBeNull();
    expect(rememberedFetcher(summarizeDomainAttempts([a('playwright', 5, true)]), now, { avoid: 'playwright' })).toBeNull();
    expect(rememberedFetcher(summarizeDomainAttempts([a('playwright', 5, true), a('playwright', 1, false, { errorType: 'timeout' })]), now)).toBeNull();
    expect(rememberedFetcher(summarizeDomainAttempts([a('playwright', 30, true)]), now)).toBeNull();
    expect(rememberedFetcher(new Map(), now)).toBeNull();
  });
});
