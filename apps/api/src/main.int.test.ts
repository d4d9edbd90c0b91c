/** The built API process: refuses a bad environment naming the variable, serves, and shuts down on SIGTERM. */
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { REDIS_URL } from '@crawler/testkit';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = `${REPO}apps/api/dist/main.js`;
const PREFIX = `{crawler_test_api_main_${process.pid}}`;
const KEY = 'main-int-test-key-0123456789abcdef';
let db: TestDatabase;

beforeAll(async () => {
  execFileSync(`${REPO}node_modules/.bin/tsc`, ['-p', `${REPO}apps/api/tsconfig.json`], { stdio: 'pipe' });
  db = await createTestDatabase('api_main');
}, 120_000);
afterAll(async () => {
  // The served API's queues leave their meta keys behind.
  const redis = createRedisConnection(REDIS_URL, 'producer');
  await deleteRedisPrefix(redis, PREFIX);
  redis.disconnect();
  await db?.drop();
});

function start(env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

describe('apps/api main', () => {
  it('will not start in production without Bull Board credentials, and says which variable', async () => {
    const p = start({ DATABASE_URL: db.url, REDIS_URL, NODE_ENV: 'production', PORT: '0' });
    expect(await p.exited).toBe(1);
    expect(p.err()).toMatch(/BULL_BOARD_PASSWORD=\(unset\): required when NODE_ENV=production/);
    expect(p.err()).toMatch(/BULL_BOARD_USER=\(unset\)/);
    expect(p.err()).toMatch(/API_KEYS=\(unset\): required when NODE_ENV=production/);
  });

  it('names a malformed variable and its value', async () => {
    const p = start({ DATABASE_URL: db.url, REDIS_URL: 'localhost:6379', PORT: 'http' });
    expect(await p.exited).toBe(1);
    expect(p.err()).toContain('REDIS_URL="localhost:6379"');
    expect(p.err()).toContain('PORT="http"');
  });

  it('says in one line that its port is taken, naming HOST and PORT', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => taken.once('listening', r));
    try {
      const port = (taken.address() as { port: number }).port;
      const p = start({ DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, PORT: String(port), HOST: '127.0.0.1' });
      expect(await p.exited).toBe(1);
      expect(p.err()).toBe(`api: cannot listen on HOST=127.0.0.1 PORT=${port}: already in use (another API on this host?)\n`);
    } finally {
      taken.close();
    }
  });

  it('serves /healthz and /readyz without a key and exits 0 on SIGTERM', async () => {
    const p = start({ DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', BULL_BOARD_USER: 'ops', BULL_BOARD_PASSWORD: 'a-long-secret', API_KEYS: KEY });
    const end = Date.now() + 30_000;
    let port: number | undefined;
    while (!port && Date.now() < end && p.child.exitCode === null) {
      port = Number(/"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/.exec(p.out())?.[1]) || undefined;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(port, p.out() + p.err()).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    // The first check opens the Postgres and Redis connections; on a starved machine that can take longer than the
    // check's 2 s budget, and /readyz rightly answers 503 until they answer.
    let ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    for (let i = 0; i < 10 && ready.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 500));
      ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    }
    expect(ready.status, p.out()).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/admin/queues`)).status).toBe(401);
    // The producer API asks for its key: 401 without, 202 with.
    const post = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${port}/links`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ urls: ['https://main.example/a'] }) });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: `Bearer ${KEY}x` })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${KEY}` })).status).toBe(202);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  }, 90_000);
});
