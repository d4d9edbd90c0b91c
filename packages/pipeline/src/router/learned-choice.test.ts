import { describe, expect, it } from 'vitest';
import { summarizeDomainAttempts, type BestFetcherResult, type DomainAttempt } from '@crawler/core';
import { chooseLearned, plainHttpRemembered } from './learned-choice.js';

const now = new Date('2026-06-01T12:00:00Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const ago = (ms: number) => new Date(now.getTime() - ms);
const a = (fetcher: string, msAgo: number, success: boolean, extra: Partial<DomainAttempt> = {}): DomainAttempt => ({
  fetcher,
  success,
  isBanned: false,
  errorType: success ? null : 'timeout',
  selectionSource: 'probe',
  attemptedAt: ago(msAgo),
  ...extra,
});
const noScore: BestFetcherResult = { best: null, scores: [] } as unknown as BestFetcherResult;
const choose = (recent: DomainAttempt[], extra: Partial<Parameters<typeof chooseLearned>[0]> = {}) =>
  chooseLearned({ learned: noScore, recent, now, confidenceThreshold: 0.6, plainHttpMemoryMs: HOUR, ...extra });

describe('plain-HTTP domain memory', () => {
  it('sends a domain to plain HTTP without a probe after a probe found its page static and plain fetches keep working', () => {
    const recent = [a('simple_http', 30 * MIN, true), a('simple_http', 5 * MIN, true, { selectionSource: 'domain_memory' })];
    expect(choose(recent)).toEqual({ kind: 'domain_memory', fetcher: 'simple_http', source: 'domain_memory', verifiedAt: ago(30 * MIN) });
  });

  it('probes again once the probe that found the domain static is older than the period, whatever worked since', () => {
    const recent = [a('simple_http', 2 * HOUR, true), a('simple_http', MIN, true, { selectionSource: 'domain_memory' }), a('simple_http', 2 * MIN, true, { selectionSource: 'learned' })];
    expect(choose(recent).kind).toBe('probe');
    expect(choose([a('simple_http', 2 * HOUR, true)], { plainHttpMemoryMs: 3 * HOUR }).kind).toBe('domain_memory');
  });

  it('probes when the latest plain fetch failed, or a page of the domain needed another fetcher since', () => {
    expect(choose([a('simple_http', 30 * MIN, true), a('simple_http', MIN, false, { errorType: 'wrong_tool' })]).kind).toBe('probe');
    expect(choose([a('simple_http', 30 * MIN, true), a('simple_http', MIN, false, { isBanned: true, errorType: 'blocked_captcha' })]).kind).toBe('probe');
    expect(choose([a('simple_http', 30 * MIN, true), a('simple_http', MIN, false)]).kind).toBe('probe');
    expect(choose([a('simple_http', 30 * MIN, true), a('playwright', MIN, true, { selectionSource: 'retry' })])).toMatchObject({ kind: 'domain_memory', fetcher: 'playwright' });
    expect(choose([a('simple_http', 30 * MIN, true), a('playwright', MIN, false, { selectionSource: 'retry' })]).kind).toBe('probe');
  });

  it('a rate limit says nothing about the tool: plain HTTP stays remembered', () => {
    expect(choose([a('simple_http', 30 * MIN, true), a('simple_http', MIN, false, { isBanned: true, errorType: 'rate_limited' })]).kind).toBe('domain_memory');
  });

  it('never for a link just blocked with plain HTTP, with the setting at 0, or without domain memory', () => {
    const recent = [a('simple_http', 30 * MIN, true)];
    expect(choose(recent, { avoid: 'simple_http' }).kind).toBe('probe');
    expect(choose(recent, { plainHttpMemoryMs: 0 }).kind).toBe('probe');
    expect(choose(recent, { plainHttpMemoryMs: undefined }).kind).toBe('probe');
    expect(choose(recent, { domainMemory: false }).kind).toBe('probe');
    expect(plainHttpRemembered(summarizeDomainAttempts([]), now, HOUR, null)).toBeNull();
  });

  it('only a fresh choice verifies: successes chosen from memory or learned data alone never start the period', () => {
    expect(choose([a('simple_http', MIN, true, { selectionSource: 'domain_memory' })]).kind).toBe('probe');
    expect(choose([a('simple_http', MIN, true, { selectionSource: 'learned' })]).kind).toBe('probe');
    expect(choose([a('simple_http', MIN, true, { selectionSource: 'retry' })]).kind).toBe('domain_memory');
  });

  it('a confident learned score still comes first', () => {
    const learned = { best: { fetcher: 'playwright', confidence: 0.9, sampleSize: 20, eligible: true }, scores: [] } as unknown as BestFetcherResult;
    expect(choose([a('simple_http', 30 * MIN, true)], { learned })).toMatchObject({ kind: 'learned', fetcher: 'playwright' });
  });
});
