import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { AttemptStore } from '@crawler/db';
import type { CommandIO } from '../command.js';
import analytics, { type ImportanceReport } from './analytics.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('cli_analytics');
  // The synthetic priors would shift the baseline; this test reasons about its own attempts only.
  await db.prisma.fetcherAttempt.deleteMany({});
  const store = new AttemptStore({ prisma: db.prisma });
  const attempts = [];
  // 12 PDFs always succeed, 12 SPA pages always fail: both far from the 50% baseline.
  for (let i = 0; i < 12; i++) {
    attempts.push({ url: `https://files.example/${i}.pdf`, fetcher: 'simple_http', success: true, heuristics: [{ type: 'url_suffix', value: '.pdf' }, { type: 'domain', value: 'files.example' }] });
    attempts.push({ url: `https://app.example/#/${i}`, fetcher: 'simple_http', success: false, errorType: 'wrong_tool', heuristics: [{ type: 'url_suffix', value: 'none' }, { type: 'domain', value: 'app.example' }] });
  }
  attempts.push({ url: 'https://rare.example/x', fetcher: 'simple_http', success: true, heuristics: [{ type: 'domain', value: 'rare.example' }] });
  await store.logAttempts(attempts);
});
afterAll(() => db?.drop());

async function run(args: string[]): Promise<string> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d) => (out += String(d)));
  const io: CommandIO = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env: { DATABASE_URL: db.url } };
  expect(await analytics.run(args, io)).toBe(0);
  return out;
}

describe('crawl analytics importance', () => {
  it('writes each heuristic information gain to importance_score and prints the table', async () => {
    const report = JSON.parse(await run(['importance', '--json'])) as ImportanceReport;
    expect(report.baselineSuccessRate).toBeCloseTo(13 / 25, 6);
    const gain = Object.fromEntries(report.gains.map((g) => [`${g.heuristicType}=${g.heuristicValue}`, g]));
    expect(Object.keys(gain).sort()).toEqual(['domain=app.example', 'domain=files.example', 'url_suffix=.pdf', 'url_suffix=none']);
    expect(gain['url_suffix=.pdf']!.informationGain).toBeCloseTo(1 - 13 / 25, 6);
    expect(gain['url_suffix=none']!.informationGain).toBeCloseTo(13 / 25, 6);
    expect(report.rowsUpdated).toBe(48);

    const stored = await db.prisma.attemptHeuristic.findMany({ where: { heuristicType: 'url_suffix', heuristicValue: '.pdf' }, select: { importanceScore: true } });
    expect(stored).toHaveLength(12);
    for (const s of stored) expect(s.importanceScore).toBeCloseTo(1 - 13 / 25, 6);
    // Too few samples: left unscored.
    expect((await db.prisma.attemptHeuristic.findFirst({ where: { heuristicValue: 'rare.example' } }))!.importanceScore).toBeNull();

    const text = await run(['importance']);
    expect(text).toMatch(/^baseline success rate 0\.520; 0 importance_score rows updated/);
    expect(text).toMatch(/url_suffix\s+\.pdf\s+12\s+1\.000\s+0\.480/);
  });
});
