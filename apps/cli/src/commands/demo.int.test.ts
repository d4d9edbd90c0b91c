/** `crawl demo` end to end on real Redis, Postgres and Chromium, with in-memory streams. */
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase } from '@crawler/db';
import type { CommandIO } from '../command.js';
import demo from './demo.js';

const database = `crawler_test_sim_demo_${process.pid}`;

function memoryIO(env: NodeJS.ProcessEnv): { io: CommandIO; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks = { out: [] as Buffer[], err: [] as Buffer[] };
  stdout.on('data', (b: Buffer) => chunks.out.push(b));
  stderr.on('data', (b: Buffer) => chunks.err.push(b));
  return {
    io: { stdin: new PassThrough(), stdout, stderr, env },
    out: () => Buffer.concat(chunks.out).toString('utf8'),
    err: () => Buffer.concat(chunks.err).toString('utf8'),
  };
}

afterAll(async () => {
  await dropDatabase('postgresql://postgres@127.0.0.1:5432/postgres', database);
});

describe('crawl demo', () => {
  it('rejects a bad environment value, naming the variable', async () => {
    const m = memoryIO({ DEMO_DATABASE: 'Robert"); DROP TABLE' });
    await expect(demo.run([], m.io)).rejects.toThrow(/DEMO_DATABASE=/);
  });

  it('crawls twice; the second crawl routes by learned decisions and probes less', async () => {
    const m = memoryIO({
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres',
      DEMO_DATABASE: database,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      DEMO_QUEUE_PREFIX: `{crawler_test_sim_demo_${process.pid}}`,
      DEMO_FIRST_HOST: '127.0.11.2',
      LOG_LEVEL: 'silent',
    });
    const code = await demo.run(['--json'], m.io);
    expect(code).toBe(0);
    const summary = JSON.parse(m.out().trim()) as { crawls: Array<{ learned: number; probes: number; links: unknown[]; siteRequests: number }> };
    const [first, second] = summary.crawls;
    expect(first!.links).toHaveLength(42);
    expect(second!.links).toHaveLength(24);
    expect(second!.learned).toBeGreaterThan(0);
    expect(second!.probes).toBeLessThan(first!.probes);
    // The human report went to stderr in --json mode and names both crawls and the totals.
    expect(m.err()).toMatch(/== crawl 2: .*\n[\s\S]*decisions: .*learned=\d+/);
    expect(m.err()).toMatch(/summary: probes \d+ → \d+/);
  }, 150_000);
});
