import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock, rememberedFetcher, summarizeDomainAttempts } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { AttemptStore } from './attempt-store.js';
import { DomainStateStore } from './domain-state.js';

let db: TestDatabase;
let attempts: AttemptStore;
let state: DomainStateStore;
const now = Date.now();
const at = (daysAgo: number) => new Date(now - daysAgo * DAY_MS);

beforeAll(async () => {
  db = await createTestDatabase('learning_domain_state');
  attempts = new AttemptStore({ prisma: db.prisma, clock: new ManualClock(now) });
  state = new DomainStateStore({ prisma: db.prisma });
});
afterAll(async () => {
  await db?.drop();
});

describe('DomainStateStore', () => {
  it('reads one domain\'s attempts newest first, canonical names, priors and other domains left out', async () => {
    const dom = (d: string) => [{ type: 'domain', value: d }, { type: 'path_depth', value: '1' }];
    await attempts.logAttempts([
      { url: 'https://walled.test/a', fetcher: 'direct_access', success: false, isBanned: true, errorType: 'blocked_captcha', selectionSource: 'probe', attemptedAt: at(3), heuristics: dom('walled.test') },
      { url: 'https://walled.test/a', fetcher: 'playwright_stealth', success: true, selectionSource: 'retry', attemptedAt: at(2), heuristics: dom('walled.test') },
      { url: 'https://walled.test/b', fetcher: 'playwright_stealth', success: true, selectionSource: 'domain_memory', attemptedAt: at(1), heuristics: dom('walled.test') },
      { url: 'https://other.test/a', fetcher: 'playwright', success: true, selectionSource: 'probe', attemptedAt: at(0), heuristics: dom('other.test') },
      { url: 'https://walled.test/prior', fetcher: 'playwright', success: true, selectionSource: 'prior', attemptedAt: at(0), heuristics: dom('walled.test') },
    ]);
    const rows = await state.recentDomainAttempts('walled.test');
    expect(rows.map((r) => [r.fetcher, r.success, r.selectionSource])).toEqual([
      ['playwright_stealth', true, 'domain_memory'],
      ['playwright_stealth', true, 'retry'],
      ['simple_http', false, 'probe'],
    ]);
    expect(rows[2]).toMatchObject({ isBanned: true, errorType: 'blocked_captcha' });
    expect(rememberedFetcher(summarizeDomainAttempts(rows), new Date(now))?.fetcher).toBe('playwright_stealth');
  });

  it('returns at most the window asked for, the newest ones', async () => {
    await attempts.logAttempts(Array.from({ length: 5 }, (_, i) => ({ url: `https://busy.test/${i}`, fetcher: 'simple_http', success: i !== 4, selectionSource: 'probe', attemptedAt: at(10 - i), heuristics: [{ type: 'domain', value: 'busy.test' }] })));
    const rows = await state.recentDomainAttempts('busy.test', 2);
    expect(rows.map((r) => r.attemptedAt.getTime())).toEqual([at(6).getTime(), at(7).getTime()]);
    expect(rows[0]!.success).toBe(false);
    expect(await state.recentDomainAttempts('nobody.test')).toEqual([]);
  });
});
