/**
 * The attempt log before and after day partitioning (migration 20261128000100), on a PRIVATE Postgres (initdb into a
 * temp dir, fsync off), so a multi-gigabyte load never touches the shared server:
 *
 * 1. `before`: the migrations up to the one before partitioning, bulk-loaded with N attempts of 8 heuristics each
 *    (store-load's generator, ages uniform over 100 days), rollups rebuilt.
 * 2. `after`: a file copy of `before` (CREATE DATABASE … TEMPLATE) migrated by `migrate()`: the partition migration
 *    timed on a database that holds the attempts.
 * 3. On both: findBestFetcher p50/p95 (rollup path and exact scan) and the router's domain-state read, then
 *    `pruneAttempts({ olderThanDays: 90 })` timed, then what it left behind (n_dead_tup, table + index size).
 * 4. Optionally (`--links N`), the reconciler's pass over N unfinished links on a private Redis: first with Redis
 *    empty (every link requeued), then again with every job alive.
 *
 * `node bench/dist/partition-bench.js --attempts 1000000 [--links 1000000] [--units week,day | none] [--direct]`
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { AttemptStore, DOMAIN_STATE_SQL, DomainStateStore, LinkStore, ensureAttemptPartitions, createPrismaClient, locateMigrationsDir, migrate, readMigrations, sqlOf, withDatabase } from '@crawler/db';
import { ManualClock, silentLogger, systemClock, type Heuristic } from '@crawler/core';
import { JobQueues, createRedisConnection } from '@crawler/queue';
import { reconcileLinks } from '@crawler/pipeline';
import { startPrivatePostgres, startPrivateRedis } from '@crawler/testkit';

const PARTITION_MIGRATION = '20261128000100_attempt_log_partitions';
const HOT = 'hot.example';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const QUERIES: Record<string, Heuristic[]> = {
  'hot url (domain+suffix+depth)': [
    { type: 'domain', value: HOT },
    { type: 'suffix', value: '.html' },
    { type: 'path_depth', value: '3' },
  ],
  'cold domain + rare suffix': [
    { type: 'domain', value: 'd42.example' },
    { type: 'suffix', value: '.aspx' },
  ],
};

// store-load's generator over 100 days instead of 90, so a 90-day prune has a tenth of the log to remove.
const LOAD_SQL = `
-- For this session only (the load), so the rebuild's grouping of every subset does not spill; reads keep the default.
SET work_mem = '2GB';
ALTER TABLE attempt_heuristics DISABLE TRIGGER ALL;
DROP INDEX IF EXISTS idx_heur_type_value, idx_heur_attempt;
INSERT INTO fetcher_attempts (id, url, fetcher, success, is_banned, attempted_at, selection_source)
SELECT i, 'https://bench/' || i,
  CASE WHEN abs(hashint8(i * 31)) % 10 = 0
       THEN (ARRAY['simple_http','playwright','playwright_stealth'])[1 + abs(hashint8(i * 37)) % 3]
       ELSE (ARRAY['simple_http','simple_http','playwright','playwright_stealth'])[1 + CASE WHEN i % 10 = 0 THEN 2 ELSE abs(hashint8(i)) % 5000 % 4 END]
  END,
  abs(hashint8(i * 41)) % 100 < 80, abs(hashint8(i * 43)) % 100 < 2,
  now() - (abs(hashint8(i * 47)) % 8640000) * interval '1 second', 'learned'
FROM generate_series(1, $1::bigint) i;
INSERT INTO attempt_heuristics (attempt, heuristic_type, heuristic_value, fetcher, success, attempted_at, created_at)
SELECT a.id, h.t, h.v, a.fetcher, a.success, a.attempted_at, a.attempted_at
FROM fetcher_attempts a
CROSS JOIN LATERAL (SELECT CASE WHEN a.id % 10 = 0 THEN 'hot.example' ELSE 'd' || (abs(hashint8(a.id)) % 5000) || '.example' END AS domain) d
CROSS JOIN LATERAL (VALUES
  ('domain', d.domain),
  ('suffix', (ARRAY['.html','.html','.html','.php','.pdf','.jpg','.htm','.aspx','.js','.css'])[1 + abs(hashint8(a.id * 7)) % 10]),
  ('path_depth', (1 + abs(hashint8(a.id * 11)) % 8)::text),
  ('status_' || (ARRAY['200','200','200','200','200','200','200','200','403','429'])[1 + abs(hashint8(a.id * 13)) % 10], 'true'),
  ((ARRAY['server_nginx','server_cloudflare','server_apache'])[1 + abs(hashtext(d.domain)) % 3], 'true'),
  ('has_spa', (abs(hashtext(d.domain)) % 4 = 0)::text),
  ('empty_body', (abs(hashint8(a.id * 23)) % 10 = 0)::text),
  ((ARRAY['contains_static','contains_cdn','contains_api','contains_assets'])[1 + abs(hashint8(a.id * 29)) % 4], 'true')
) AS h(t, v)
WHERE a.url LIKE 'https://bench/%';
SELECT setval(pg_get_serial_sequence('fetcher_attempts', 'id'), (SELECT max(id) FROM fetcher_attempts));
CREATE INDEX "idx_heur_type_value" ON "attempt_heuristics"("heuristic_type", "heuristic_value", "attempt", "fetcher", "success", "attempted_at");
CREATE INDEX "idx_heur_attempt" ON "attempt_heuristics"("attempt");
ALTER TABLE attempt_heuristics ENABLE TRIGGER ALL;
-- The rebuild rewrites rollup_keys on every attempt; the attempt-update triggers would only recompute what the rebuild
-- then truncates and rebuilds (5 of 33 s at 200k), so they are skipped for the load.
SET session_replication_role = replica;
SELECT rollup_rebuild();
RESET session_replication_role`;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function time(fn: () => Promise<unknown>, budgetMs: number, maxRuns: number): Promise<number[]> {
  for (let i = 0; i < 3; i++) await fn();
  const out: number[] = [];
  const start = performance.now();
  while (out.length < maxRuns && (out.length < 10 || performance.now() - start < budgetMs)) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Dead tuples and bytes (heap + indexes + toast) of the attempt log, summed over partitions when partitioned. */
async function footprint(url: string): Promise<{ dead: number; live: number; mb: number; relations: number }> {
  return withClient(url, async (c) => {
    await c.query('SELECT pg_stat_force_next_flush()');
    const { rows } = await c.query(`
      SELECT coalesce(sum(s.n_dead_tup), 0)::float8 AS dead, coalesce(sum(s.n_live_tup), 0)::float8 AS live,
             coalesce(sum(pg_total_relation_size(s.relid)), 0)::float8 / 1048576 AS mb, count(*)::int AS relations
      FROM pg_stat_user_tables s LEFT JOIN pg_inherits i ON i.inhrelid = s.relid LEFT JOIN pg_class p ON p.oid = i.inhparent
      WHERE coalesce(p.relname, s.relname) IN ('fetcher_attempts', 'attempt_heuristics')`);
    return rows[0];
  });
}

async function measureReads(url: string, label: string, out: string[]): Promise<void> {
  const prisma = createPrismaClient(url, { maxConnections: 2 });
  try {
    const store = new AttemptStore({ prisma });
    const rt = pct(await time(() => sqlOf(prisma).query('SELECT 1'), 2000, 200), 50);
    for (const [name, hs] of Object.entries(QUERIES)) {
      const fast = await time(() => store.findBestFetcher(hs), 10_000, 200);
      const scan = await time(() => store.findBestFetcher(hs, { strategy: 'scan' }), 6_000, 30);
      out.push(`| ${label} | findBestFetcher ${name} | ${pct(fast, 50).toFixed(2)} | ${pct(fast, 95).toFixed(2)} | scan ${pct(scan, 50).toFixed(0)} / ${pct(scan, 95).toFixed(0)} | ${rt.toFixed(2)} |`);
    }
    // The plain statement (the store's read before migration 20261129200000, and on `before`, which stops earlier),
    // then the store's read through domain_recent_attempts where the function exists.
    // The plain statement reads columns later migrations added (exit_tier): a `before` schema has none, and says so.
    const [{ armed }] = await sqlOf(prisma).query<{ armed: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'fetcher_attempts' AND column_name = 'exit_tier') AS armed");
    if (armed) {
      const plain = await time(() => sqlOf(prisma).query(DOMAIN_STATE_SQL, [HOT]), 8_000, 200);
      out.push(`| ${label} | domain-state read (${HOT}), plain statement | ${pct(plain, 50).toFixed(2)} | ${pct(plain, 95).toFixed(2)} | | ${rt.toFixed(2)} |`);
    } else {
      out.push(`| ${label} | domain-state read: not measured (this schema predates the statement's columns) | | | | ${rt.toFixed(2)} |`);
    }
    const [{ fn }] = await sqlOf(prisma).query<{ fn: boolean }>("SELECT to_regprocedure('domain_recent_attempts(text, integer)') IS NOT NULL AS fn");
    if (fn) {
      const domains = new DomainStateStore({ prisma });
      const ds = await time(() => domains.recentDomainAttempts(HOT), 8_000, 200);
      out.push(`| ${label} | domain-state read (${HOT}), store (domain_recent_attempts) | ${pct(ds, 50).toFixed(2)} | ${pct(ds, 95).toFixed(2)} | | ${rt.toFixed(2)} |`);
    }
    console.log(out.slice(fn ? -4 : -3).join('\n'));
  } finally {
    await prisma.$disconnect();
  }
}

// pruneAttempts as it was before partitioning (attempt-stats.ts pruneBefore at main): batches of 10,000 deleted by
// id, heuristics by cascade, rollups by the delete trigger.
async function legacyPrune(url: string, before: Date): Promise<{ attempts: number; heuristics: number }> {
  return withClient(url, async (c) => {
    const total = { attempts: 0, heuristics: 0 };
    for (;;) {
      const { rows } = await c.query(
        `WITH doomed AS (
           SELECT id FROM fetcher_attempts WHERE attempted_at < $1::timestamptz ORDER BY attempted_at LIMIT $2
         ), heur AS (
           SELECT count(*)::int AS n FROM attempt_heuristics WHERE attempt IN (SELECT id FROM doomed)
         ), gone AS (
           DELETE FROM fetcher_attempts WHERE id IN (SELECT id FROM doomed) RETURNING 1
         )
         SELECT (SELECT count(*)::int FROM gone) AS attempts, (SELECT n FROM heur) AS heuristics`,
        [before.toISOString(), 10_000],
      );
      total.attempts += rows[0].attempts;
      total.heuristics += rows[0].heuristics;
      if (rows[0].attempts < 10_000) return total;
    }
  });
}

async function prune(url: string, label: string, out: string[], legacy: boolean): Promise<void> {
  const before = await footprint(url);
  const prisma = createPrismaClient(url, { maxConnections: 2 });
  try {
    const t0 = performance.now();
    const r = legacy
      ? await legacyPrune(url, new Date(Date.now() - 90 * 86_400_000))
      : await new AttemptStore({ prisma, clock: new ManualClock(Date.now()) }).pruneAttempts({ olderThanDays: 90 });
    const s = (performance.now() - t0) / 1000;
    const after = await footprint(url);
    const line = `| ${label} | ${r.attempts.toLocaleString('en')} attempts, ${r.heuristics.toLocaleString('en')} heuristics | ${s.toFixed(1)} | ${after.dead.toLocaleString('en')} | ${before.mb.toFixed(0)} → ${after.mb.toFixed(0)} | ${after.relations} |`;
    out.push(line);
    console.log(line);
  } finally {
    await prisma.$disconnect();
  }
}

async function reconcileBench(serverUrl: string, links: number, out: string[]): Promise<void> {
  const url = withDatabase(serverUrl, 'reconcile');
  await withClient(serverUrl, (c) => c.query('CREATE DATABASE reconcile'));
  await migrate(url);
  await withClient(url, async (c) => {
    await c.query(`INSERT INTO links (url, initial_url, domain, status, updated_at)
      SELECT 'https://d' || (g % 5000) || '.example/p/' || g, 'https://d' || (g % 5000) || '.example/p/' || g, 'd' || (g % 5000) || '.example',
             (ARRAY['queued','queued','queued','routing','fetching','paused'])[1 + g % 6], now() - interval '1 hour'
      FROM generate_series(1, $1::int) g`, [links]);
    await c.query('VACUUM ANALYZE links');
  });
  const redis = await startPrivateRedis();
  const conn = createRedisConnection(redis.url, 'producer');
  const prisma = createPrismaClient(url, { maxConnections: 4 });
  try {
    const queues = new JobQueues({ connection: conn, prefix: 'bench' });
    const deps = { links: new LinkStore(prisma), queues, clock: systemClock, logger: silentLogger, settings: { graceMs: 0, batchSize: 500, maxRescues: 3 } };
    const lost = await reconcileLinks(deps);
    const alive = await reconcileLinks(deps);
    const info = await conn.info('memory');
    const line = `| ${links.toLocaleString('en')} | ${(lost.durationMs / 1000).toFixed(0)} s (${Object.values(lost.requeued).reduce((a, b) => a + b, 0).toLocaleString('en')} requeued) | ${(alive.durationMs / 1000).toFixed(0)} s (${alive.alive.toLocaleString('en')} alive) | ${(links / (alive.durationMs / 1000)).toFixed(0)} links/s | ${/used_memory_human:(\S+)/.exec(info)?.[1]} |`;
    out.push(line);
    console.log(line);
  } finally {
    await prisma.$disconnect();
    conn.disconnect();
    await redis.close();
  }
}

/**
 * `--direct`: the attempt log as a deployment has it today (every migration, week partitions over the 100 days),
 * bulk-loaded straight into the partitions (no unpartitioned copy, no migration timed): for sizes where loading twice
 * does not fit. Then reads, `pruneAttempts({ olderThanDays: 90 })` (what `crawl prune` runs), reads again.
 */
async function directLoad(serverUrl: string, attempts: number, reads: string[], prunes: string[]): Promise<void> {
  await withClient(serverUrl, (c) => c.query('CREATE DATABASE direct'));
  const url = withDatabase(serverUrl, 'direct');
  await migrate(url);
  const prisma = createPrismaClient(url, { maxConnections: 2 });
  try {
    await ensureAttemptPartitions(prisma, { now: new Date(Date.now() - 101 * 86_400_000), aheadDays: 109, unit: 'week' });
  } finally {
    await prisma.$disconnect();
  }
  const t0 = performance.now();
  await withClient(url, async (c) => {
    await c.query("DELETE FROM fetcher_attempts WHERE selection_source = 'prior'");
    for (const stmt of LOAD_SQL.split(';\n').map((s) => s.trim()).filter(Boolean)) {
      const t = performance.now();
      await c.query(stmt, stmt.includes('$1') ? [attempts] : []);
      console.log(`  ${((performance.now() - t) / 1000).toFixed(0)} s: ${stmt.replace(/\s+/g, ' ').slice(0, 70)}`);
    }
    const t = performance.now();
    await c.query('VACUUM ANALYZE fetcher_attempts, attempt_heuristics');
    console.log(`  ${((performance.now() - t) / 1000).toFixed(0)} s: VACUUM ANALYZE`);
  });
  const fp = await footprint(url);
  const loadS = (performance.now() - t0) / 1000;
  console.log(`loaded ${attempts.toLocaleString('en')} attempts (${(attempts * 8).toLocaleString('en')} heuristic rows) into week partitions in ${loadS.toFixed(0)} s; ${fp.relations} relations, ${fp.mb.toFixed(0)} MB`);
  prunes.push(`| load (week partitions, direct) | ${attempts.toLocaleString('en')} attempts + ${(attempts * 8).toLocaleString('en')} heuristics | ${loadS.toFixed(0)} | | ${fp.mb.toFixed(0)} | ${fp.relations} |`);
  const label = `week partitions, ${attempts.toLocaleString('en')} attempts`;
  await measureReads(url, label, reads);
  await prune(url, `${label}: DROP of whole partitions`, prunes, false);
  await measureReads(url, `${label}, pruned`, reads);
}

async function main(): Promise<void> {
  const attempts = arg('attempts', 1_000_000);
  const links = arg('links', 0);
  const pgServer = await startPrivatePostgres();
  const dir = mkdtempSync(join(tmpdir(), 'crawler-prepartition-'));
  const reads: string[] = [];
  const prunes: string[] = [];
  const rec: string[] = [];
  try {
    console.log(`load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores; private Postgres on port ${pgServer.port}`);
    await withClient(pgServer.url, async (c) => {
      for (const s of ["shared_buffers"]) console.log(s, (await c.query(`SHOW ${s}`)).rows[0]);
      await c.query("ALTER SYSTEM SET maintenance_work_mem = '256MB'");
      await c.query("ALTER SYSTEM SET max_wal_size = '4GB'");
      await c.query('SELECT pg_reload_conf()');
    });
    if (links > 0) {
      await reconcileBench(pgServer.url, links, rec);
    }
    if (attempts > 0 && process.argv.includes('--direct')) {
      await directLoad(pgServer.url, attempts, reads, prunes);
    } else if (attempts > 0) {
      for (const m of readMigrations()) if (m.name < PARTITION_MIGRATION) cpSync(join(locateMigrationsDir(), m.name), join(dir, m.name), { recursive: true });
      await withClient(pgServer.url, (c) => c.query('CREATE DATABASE before'));
      const beforeUrl = withDatabase(pgServer.url, 'before');
      await migrate(beforeUrl, { migrationsDir: dir });
      let t0 = performance.now();
      await withClient(beforeUrl, async (c) => {
        await c.query("DELETE FROM fetcher_attempts WHERE selection_source = 'prior'");
        for (const stmt of LOAD_SQL.split(';\n').map((s) => s.trim()).filter(Boolean)) await c.query(stmt, stmt.includes('$1') ? [attempts] : []);
        await c.query('VACUUM ANALYZE fetcher_attempts');
        await c.query('VACUUM ANALYZE attempt_heuristics');
      });
      console.log(`loaded ${attempts.toLocaleString('en')} attempts (${(attempts * 8).toLocaleString('en')} heuristic rows) in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      await measureReads(beforeUrl, 'before (one table)', reads);
      // `--units none`: the one-table log alone (reads, then the batched DELETE prune), for sizes where a copy does not fit.
      const units = (process.argv.includes('--units') ? process.argv[process.argv.indexOf('--units') + 1]! : 'week').split(',').filter((u) => u !== 'none');
      for (const unit of units) {
        t0 = performance.now();
        await withClient(pgServer.url, async (c) => {
          await c.query(`CREATE DATABASE after_${unit} TEMPLATE before`);
          await c.query(`ALTER DATABASE after_${unit} SET crawler.attempt_log_partition = '${unit}'`);
        });
        const afterUrl = withDatabase(pgServer.url, `after_${unit}`);
        const copyS = (performance.now() - t0) / 1000;
        t0 = performance.now();
        await migrate(afterUrl);
        const migrateS = (performance.now() - t0) / 1000;
        await withClient(afterUrl, (c) => c.query('VACUUM ANALYZE fetcher_attempts, attempt_heuristics'));
        const fp = await footprint(afterUrl);
        console.log(`copied in ${copyS.toFixed(0)} s; partition migration (${unit}) on ${attempts.toLocaleString('en')} attempts: ${migrateS.toFixed(0)} s; ${fp.relations} relations, live rows ${fp.live}`);
        prunes.push(`| partition migration (${unit}) | ${attempts.toLocaleString('en')} attempts + ${(attempts * 8).toLocaleString('en')} heuristics | ${migrateS.toFixed(0)} | | | ${fp.relations} |`);
        await measureReads(afterUrl, `after (${unit} partitions)`, reads);
        await prune(afterUrl, `after (${unit}): DROP of whole partitions`, prunes, false);
        await measureReads(afterUrl, `after (${unit}), pruned`, reads);
        await withClient(pgServer.url, (c) => c.query(`DROP DATABASE after_${unit}`));
      }
      await prune(beforeUrl, 'before: batched DELETE', prunes, true);
      await measureReads(beforeUrl, 'before, pruned (dead rows left)', reads);
    }
  } finally {
    console.log(`\nload average at the end ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    console.log('\n| database | read | p50 ms | p95 ms | exact scan p50 / p95 ms | SELECT 1 p50 ms |\n|---|---|---|---|---|---|');
    for (const l of reads) console.log(l);
    console.log('\n| layout | pruned (90 days) | prune s | n_dead_tup after | attempt log MB before → after | relations |\n|---|---|---|---|---|---|');
    for (const l of prunes) console.log(l);
    if (rec.length) {
      console.log('\n| unfinished links | pass, Redis empty | pass, every job alive | alive pass rate | Redis memory after |\n|---|---|---|---|---|');
      for (const l of rec) console.log(l);
    }
    rmSync(dir, { recursive: true, force: true });
    await pgServer.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
