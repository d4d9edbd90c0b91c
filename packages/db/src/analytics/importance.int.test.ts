import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { AttemptStore } from '../attempts/attempt-store.js';
import { ImportanceAnalytics } from './importance.js';

// The design's "Importance Score" query, verbatim except that :baseline is bound as $1.
const DOCUMENT_BASELINE_SQL = `SELECT AVG(CASE WHEN success THEN 1.0 ELSE 0.0 END) as baseline
FROM fetcher_attempts;`;
const DOCUMENT_INFO_GAIN_SQL = `SELECT
    ah.heuristic_type,
    ah.heuristic_value,
    AVG(CASE WHEN fa.success THEN 1.0 ELSE 0.0 END) as conditional_rate,
    COUNT(*) as sample_size,
    ABS(AVG(CASE WHEN fa.success THEN 1.0 ELSE 0.0 END) - $1) as info_gain
FROM fetcher_attempts fa
JOIN attempt_heuristics ah ON fa.id = ah.attempt
GROUP BY ah.heuristic_type, ah.heuristic_value
HAVING COUNT(*) > 10
ORDER BY info_gain DESC;`;

let db: TestDatabase;
let analytics: ImportanceAnalytics;

beforeAll(async () => {
  db = await createTestDatabase('db_importance');
  const store = new AttemptStore({ prisma: db.prisma, clock: new ManualClock(Date.now()) });
  const rows = [];
  for (let i = 0; i < 60; i++) {
    const captcha = i % 3 === 0;
    rows.push({
      url: `https://imp.test/${i}`,
      fetcher: 'simple_http',
      success: captcha ? i % 9 === 0 : i % 5 !== 0,
      heuristics: [
        { type: 'domain', value: i % 2 ? 'imp-a.test' : 'imp-b.test' },
        ...(captcha ? [{ type: 'has_captcha', value: 'true' }] : []),
        ...(i < 8 ? [{ type: 'rare', value: 'true' }] : []),
      ],
    });
  }
  await store.logAttempts(rows);
  analytics = new ImportanceAnalytics({ prisma: db.prisma });
});
afterAll(async () => {
  await db?.drop();
});

describe('importance analytics', () => {
  it('matches the document SQL run verbatim', async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const baseline = Number((await c.query(DOCUMENT_BASELINE_SQL)).rows[0].baseline);
      const doc = (await c.query(DOCUMENT_INFO_GAIN_SQL, [baseline])).rows;
      expect(await analytics.baselineSuccessRate()).toBeCloseTo(baseline, 12);
      const ours = await analytics.conditionalSuccessRates();
      expect(doc.length).toBeGreaterThan(2);
      expect(ours.map((g) => `${g.heuristicType}=${g.heuristicValue}`).sort()).toEqual(doc.map((r) => `${r.heuristic_type}=${r.heuristic_value}`).sort());
      for (const r of doc) {
        const g = ours.find((x) => x.heuristicType === r.heuristic_type && x.heuristicValue === r.heuristic_value)!;
        expect(g.sampleSize).toBe(Number(r.sample_size));
        expect(g.conditionalSuccessRate).toBeCloseTo(Number(r.conditional_rate), 12);
        expect(g.informationGain).toBeCloseTo(Number(r.info_gain), 12);
      }
      expect(ours.some((g) => g.heuristicType === 'rare')).toBe(false);
      expect(ours[0]?.heuristicType).toBe('has_captcha');
    } finally {
      await c.end();
    }
  });

  it('writes the information gain into importance_score', async () => {
    const gains = await analytics.conditionalSuccessRates();
    const changed = await analytics.updateImportanceScores();
    expect(changed).toBeGreaterThan(0);
    const captcha = gains.find((g) => g.heuristicType === 'has_captcha')!;
    const rows = await db.prisma.attemptHeuristic.findMany({ where: { heuristicType: 'has_captcha' } });
    expect(rows.length).toBe(20);
    for (const r of rows) expect(r.importanceScore).toBeCloseTo(captcha.informationGain, 12);
    const rare = await db.prisma.attemptHeuristic.findMany({ where: { heuristicType: 'rare' } });
    expect(rare.every((r) => r.importanceScore === null)).toBe(true);
    expect(await analytics.updateImportanceScores()).toBe(0);
  });
});
