/**
 * A SIGTERM or Ctrl-C while a crawling command still waits for Redis (down, or not up yet) stops it cleanly, with the
 * exit code the README gives, instead of the signal's default (killed, 143) with nothing closed. The built CLI in a
 * child process: the signal is real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { freePort } from '@crawler/testkit';
import { startCrawl } from '../__fixtures__/crawl-process.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('cliux_run_stop');
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

/** Run the CLI against a Redis that is not there; once it says it waits for it, send `signal`. */
async function stopWhileWaiting(argv: string[], signal: NodeJS.Signals, redisDb: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const port = await freePort();
  const run = startCrawl(argv, {
    cleanEnv: true,
    env: { DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${port}/${redisDb}`, QUEUE_PREFIX: '{cliux_run_stop}', FETCHERS: 'simple_http', LOG_LEVEL: 'info' },
  });
  let sent = false;
  run.child.stderr!.on('data', () => {
    // Its first failed connection: the command is waiting for Redis now.
    if (!sent && /ECONNREFUSED/.test(run.stderr())) {
      sent = true;
      run.child.kill(signal);
    }
  });
  const { code, signal: sig, stderr } = await run.done;
  expect(sent, stderr).toBe(true);
  return { code, signal: sig, stderr };
}

// Each test is its own process on its own dead port, waiting: run side by side, they wait at once.
describe.concurrent('a signal while waiting for Redis', () => {
  // Database 11 waits in the SELECT of the database check, database 0 (no SELECT) in the wait for Redis itself.
  for (const redisDb of [11, 0]) {
    it(`stops crawl run with 0, as its SIGTERM does once running (database ${redisDb})`, async () => {
      const r = await stopWhileWaiting(['run'], 'SIGTERM', redisDb);
      expect(r.signal, r.stderr).toBeNull();
      expect(r.code, r.stderr).toBe(0);
    }, 60_000);
  }

  it('stops crawl run --until-idle with 130: its work was not done', async () => {
    const r = await stopWhileWaiting(['run', '--until-idle'], 'SIGINT', 11);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toMatch(/interrupted/);
  }, 60_000);

  it('stops crawl events dispatch with 0, as its SIGTERM does once dispatching', async () => {
    const r = await stopWhileWaiting(['events', 'dispatch'], 'SIGTERM', 11);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);

  it('stops crawl crawl with 130 and says nothing was started', async () => {
    const r = await stopWhileWaiting(['crawl', 'https://stop.example/'], 'SIGTERM', 0);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toMatch(/crawl crawl: interrupted/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
  }, 60_000);
});
