/**
 * The fleet under chaos (`npm run chaos -w @crawler/bench`, after `npm run build`): two router and two fetcher
 * processes plus the API, on PRIVATE Redis and Postgres instances, crawl 3,000 links over 30 loopback hosts while
 * workers are SIGKILLed at random (and restarted), Redis is restarted empty once and Postgres is stopped for 15 s once.
 * At the end: every link done, one stored page per link, every done link with its successful attempt, and the
 * requests per page (duplicates from re-delivery are allowed, and counted).
 *
 * CHAOS_LINKS (3000), CHAOS_HOSTS (30), CHAOS_PG_DOWN_MS (15000), CHAOS_TIMEOUT_MS (900000) resize it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '@crawler/db/testing';
import { loadConfig, createRuntime } from '@crawler/pipeline';
import { freePort, startPrivatePostgres, startPrivateRedis, startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { benchEnv } from './env.js';

const { chaosLinks: LINKS, chaosHosts: HOSTS, chaosPgDownMs: PG_DOWN_MS, chaosTimeoutMs: TIMEOUT_MS } = benchEnv();
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rand = (lo: number, hi: number) => lo + Math.random() * (hi - lo);
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

interface Role {
  name: string;
  script: string;
  env: Record<string, string>;
  proc: ChildProcess | null;
  kills: number;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const [redis, pg] = await Promise.all([startPrivateRedis(), startPrivatePostgres()]);
  const db = await createTestDatabase('chaos', { serverUrl: pg.url });
  const perHost = Math.ceil(LINKS / HOSTS);
  const servers: TestServer[] = [];
  for (let h = 0; h < HOSTS; h++) {
    const routes = Object.fromEntries(Array.from({ length: perHost }, (_, i) => [`/p/${i}`, { body: staticArticle({ title: `Host ${h} page ${i}` }), delayMs: 20 }]));
    servers.push(await startTestServer(routes, { host: `127.0.0.${h + 1}` }));
  }
  const urls = servers.flatMap((s) => Array.from({ length: perHost }, (_, i) => s.url(`/p/${i}`))).slice(0, LINKS);
  const common: Record<string, string> = {
    DATABASE_URL: db.url, REDIS_URL: redis.url, QUEUE_PREFIX: '{chaos}', ALLOW_PRIVATE_NETWORKS: 'true', ROBOTS_ENABLED: 'false',
    FETCHERS: 'simple_http:16', DOMAIN_MIN_DELAY_MS: '0', DOMAIN_MAX_CONCURRENCY: '4', METRICS_PORT: 'off', LOG_LEVEL: 'error',
    LOCK_DURATION_MS: '5000', STALLED_INTERVAL_MS: '2000', RECONCILE_INTERVAL_MS: '5000', RECONCILE_GRACE_MS: '10000', INFRA_RETRY_MAX_MS: '5000',
    HEALTH_LOG_INTERVAL_MS: '600000', SHUTDOWN_DRAIN_TIMEOUT_MS: '2000',
  };
  const apiPort = await freePort();
  const roles: Role[] = [
    { name: 'router-1', script: 'apps/router/dist/main.js', env: common, proc: null, kills: 0 },
    { name: 'router-2', script: 'apps/router/dist/main.js', env: common, proc: null, kills: 0 },
    { name: 'fetcher-1', script: 'apps/fetcher/dist/main.js', env: common, proc: null, kills: 0 },
    { name: 'fetcher-2', script: 'apps/fetcher/dist/main.js', env: common, proc: null, kills: 0 },
    { name: 'api', script: 'apps/api/dist/main.js', env: { ...common, PORT: String(apiPort) }, proc: null, kills: 0 },
  ];
  let stopping = false;
  const unexpectedExits: string[] = [];
  const start = (r: Role): void => {
    const proc = spawn(process.execPath, [r.script], { cwd: ROOT, env: { ...process.env, ...r.env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    proc.stderr!.on('data', (d) => (err = (err + String(d)).slice(-2000)));
    proc.on('exit', (code, signal) => {
      if (!stopping && signal !== 'SIGKILL') unexpectedExits.push(`${r.name} exited (${code ?? signal}): ${err.slice(-500)}`);
    });
    r.proc = proc;
  };
  roles.forEach(start);

  // Producer: the links go in through the pipeline's own enqueue (one process, like `crawl enqueue`).
  const producer = createRuntime(loadConfig(common));
  const { accepted } = await producer.enqueue(urls);
  await producer.close({ drainTimeoutMs: 0 });
  log(`${accepted.length} links enqueued over ${HOSTS} hosts; fleet: 2 routers, 2 fetchers, API`);

  const counts = async (): Promise<Record<string, number> | null> => {
    try {
      const rows = await db.prisma.link.groupBy({ by: ['status'], _count: true });
      return Object.fromEntries(rows.map((r) => [r.status, r._count]));
    } catch {
      return null; // Postgres is away: ask again later
    }
  };
  const health = async (): Promise<string> => {
    try {
      const res = await fetch(`http://127.0.0.1:${apiPort}/readyz`, { signal: AbortSignal.timeout(5_000) });
      return `${res.status} ${JSON.stringify((await res.json()) as unknown)}`;
    } catch (err) {
      return `no answer: ${(err as Error).message}`;
    }
  };

  const events: string[] = [];
  let redisDone = false;
  let pgDone = false;
  let nextKill = Date.now() + rand(2_000, 6_000);
  const deadline = Date.now() + TIMEOUT_MS;
  let last: Record<string, number> = {};
  for (;;) {
    await sleep(500);
    const c = await counts();
    if (c) last = c;
    const done = last.done ?? 0;
    if (done + (last.failed ?? 0) >= accepted.length && c) break;
    if (Date.now() > deadline) {
      log(`TIMEOUT: ${JSON.stringify(last)}`);
      break;
    }
    if (Date.now() >= nextKill) {
      const workers = roles.filter((r) => r.name !== 'api');
      const victim = workers[Math.floor(Math.random() * workers.length)]!;
      victim.proc?.kill('SIGKILL');
      victim.kills += 1;
      events.push(`SIGKILL ${victim.name} at ${done} done`);
      setTimeout(() => !stopping && start(victim), 1_000);
      nextKill = Date.now() + rand(3_000, 8_000);
    }
    if (!redisDone && done >= accepted.length * 0.3) {
      redisDone = true;
      await redis.kill();
      const during = await health();
      await redis.start();
      events.push(`Redis restarted empty at ${done} done (readyz while down: ${during})`);
      log(events.at(-1)!);
    }
    if (!pgDone && done >= accepted.length * 0.6) {
      pgDone = true;
      await pg.stop();
      await sleep(Math.min(3_000, PG_DOWN_MS));
      const during = await health();
      await sleep(Math.max(0, PG_DOWN_MS - 3_000));
      await pg.start();
      events.push(`Postgres stopped ${PG_DOWN_MS} ms at ${done} done (readyz while down: ${during})`);
      log(events.at(-1)!);
    }
  }
  const crawlMs = Date.now() - t0;
  const healthAfter = await health();
  stopping = true;
  for (const r of roles) r.proc?.kill('SIGTERM');
  await sleep(3_000);
  for (const r of roles) if (r.proc && r.proc.exitCode === null) r.proc.kill('SIGKILL');

  const p = db.prisma;
  const pagesPerLink = await p.$queryRawUnsafe<{ n: number; links: number }[]>(
    'SELECT n::int, count(*)::int AS links FROM (SELECT l.id, count(c.id) AS n FROM links l LEFT JOIN fetched_content c ON c.link = l.id GROUP BY l.id) x GROUP BY n ORDER BY n',
  );
  const doneWithoutSuccess = await p.link.count({ where: { status: 'done', attempts: { none: { success: true } } } });
  const attempts = await p.fetcherAttempt.count({ where: { linkId: { not: null } } });
  const failedAttempts = await p.fetcherAttempt.count({ where: { linkId: { not: null }, success: false } });
  const counted = (await p.link.aggregate({ _sum: { attemptCount: true } }))._sum.attemptCount ?? 0;
  const requests = servers.reduce((n, s) => n + s.hits(), 0);
  const final = await counts();

  log('--- chaos report ---');
  log(`links ${accepted.length}: ${JSON.stringify(final)} in ${(crawlMs / 1000).toFixed(1)} s`);
  log(`stored pages per link: ${pagesPerLink.map((r) => `${r.links} links with ${r.n}`).join(', ')}`);
  log(`done links without a successful attempt logged: ${doneWithoutSuccess}`);
  log(`attempts logged ${attempts} (failed ${failedAttempts}), links' attempt_count sum ${counted}`);
  log(`requests ${requests} = ${(requests / accepted.length).toFixed(3)} per page (${requests - accepted.length} duplicates from re-delivery)`);
  log(`kills: ${roles.map((r) => `${r.name} ${r.kills}`).join(', ')}`);
  for (const e of events.filter((x) => !x.startsWith('SIGKILL'))) log(e);
  log(`readyz after: ${healthAfter}`);
  if (unexpectedExits.length > 0) log(`UNEXPECTED EXITS:\n${unexpectedExits.join('\n')}`);

  await db.drop().catch(() => undefined);
  for (const s of servers) await s.close();
  await redis.close();
  await pg.close();
  const ok = final?.done === accepted.length && pagesPerLink.every((r) => r.n === 1) && doneWithoutSuccess === 0 && unexpectedExits.length === 0;
  log(ok ? 'OK' : 'FAILED');
  process.exit(ok ? 0 : 1);
}

main().catch((err: unknown) => {
  process.stderr.write(`chaos: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
