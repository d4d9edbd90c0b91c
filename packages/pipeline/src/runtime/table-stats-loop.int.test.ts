import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient } from '@crawler/db';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import type { Logger } from '@crawler/core';
import { TableStatsLoop } from './table-stats-loop.js';

function recordingLogger(): Logger & { lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (a: unknown, b?: unknown) => void lines.push({ level, msg: String(typeof a === 'string' ? a : b) });
  const logger = { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return logger;
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('table_stats_loop');
});
afterAll(async () => {
  await db?.drop();
});

describe('TableStatsLoop', () => {
  it('analyzes the attempt log once it grew past its statistics', async () => {
    await db.prisma.$executeRawUnsafe(`INSERT INTO fetcher_attempts (url, fetcher, success, is_banned, attempted_at, selection_source)
      SELECT 'https://grow.test/' || g, 'simple_http', true, false, now(), 'learned' FROM generate_series(1, 2000) g`);
    const lastAnalyze = async () =>
      (await db.prisma.$queryRawUnsafe<{ at: Date | null }[]>("SELECT max(s.last_analyze) AS at FROM pg_stat_user_tables s JOIN pg_inherits i ON i.inhrelid = s.relid WHERE i.inhparent = 'fetcher_attempts'::regclass"))[0]?.at ?? null;
    expect(await lastAnalyze()).toBeNull();
    const logger = recordingLogger();
    const loop = new TableStatsLoop({ prisma: db.prisma, intervalMs: 60_000, logger });
    // The inserting connection reports its counts within a second or so: check until it has.
    for (let i = 0; i < 60 && (await lastAnalyze()) === null; i++) {
      await loop.runOnce();
      if ((await lastAnalyze()) === null) await new Promise((r) => setTimeout(r, 250));
    }
    expect(await lastAnalyze()).not.toBeNull();
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
    await loop.stop();
  }, 30_000);

  it('survives a database it cannot reach, warning once per outage', async () => {
    const gone = createPrismaClient(db.url.replace(/\/[^/?]+(\?|$)/, '/crawler_no_such_database_for_stats$1'));
    const logger = recordingLogger();
    const loop = new TableStatsLoop({ prisma: gone, intervalMs: 60_000, logger });
    try {
      await loop.runOnce();
      await loop.runOnce();
      expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual(['could not check table statistics; will try again']);
    } finally {
      await loop.stop();
      await gone.$disconnect();
    }
  });
});
