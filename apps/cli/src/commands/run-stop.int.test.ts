/**
 * A SIGTERM or Ctrl-C while a crawling command still waits for Redis (down, or not up yet) stops it cleanly, with the
 * exit code the README gives, instead of the signal's default (killed, 143) with nothing closed. The built CLI in a
 * child process: the signal is real.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';

const BIN = fileURLToPath(new URL('../../bin/crawl.js', import.meta.url));
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('cliux_run_stop');
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

/** A port nothing listens on (taken from the OS, then given back). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** Run the CLI against a Redis that is not there; once it says it waits for it, send `signal`. */
async function stopWhileWaiting(argv: string[], signal: NodeJS.Signals, redisDb: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, ...argv], {
    env: { PATH: process.env.PATH, DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${port}/${redisDb}`, QUEUE_PREFIX: '{cliux_run_stop}', FETCHERS: 'simple_http', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let sent = false;
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    // Its first failed connection: the command is waiting for Redis now.
    if (!sent && /ECONNREFUSED/.test(stderr)) {
      sent = true;
      child.kill(signal);
    }
  });
  child.stdout.resume();
  const [code, sig] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on('exit', (c, s) => r([c, s])));
  expect(sent, stderr).toBe(true);
  return { code, signal: sig, stderr };
}

describe('a signal while waiting for Redis', () => {
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
