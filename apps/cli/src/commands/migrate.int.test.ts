import { readdirSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptStore, ContentStore, sqlOf } from '@crawler/db';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { UsageError, type CommandIO } from '../command.js';
import { runCli } from '../cli.js';
import migrate from './migrate.js';
import prune from './prune.js';

const MIGRATIONS = readdirSync(fileURLToPath(new URL('../../../../prisma/migrations/', import.meta.url)), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const DAY_MS = 86_400_000;

let db: TestDatabase;
let emptyName: string;
let emptyUrl: string;

beforeAll(async () => {
  db = await createTestDatabase('cli_migrate');
  // A database with nothing in it, as `crawl migrate` meets it on a fresh machine.
  emptyName = `${db.name}_empty`;
  await db.prisma.$executeRawUnsafe(`CREATE DATABASE "${emptyName}"`);
  emptyUrl = db.url.replace(/\/[^/?]+(\?|$)/, `/${emptyName}$1`);
});

afterAll(async () => {
  await db?.prisma.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${emptyName}" WITH (FORCE)`).catch(() => undefined);
  await db?.drop();
});

async function run(command: typeof migrate, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d) => (out += String(d)));
  const io: CommandIO = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env };
  const code = await command.run(args, io);
  return { code, out };
}

describe('crawl migrate', () => {
  it('is what a command run against a database without migrations says to do, not a stack trace', async () => {
    for (const args of [['schedule'], ['stats'], ['content', 'https://x.example/']]) {
      const stderr = new PassThrough();
      let err = '';
      stderr.on('data', (d) => (err += String(d)));
      const env = { DATABASE_URL: emptyUrl, QUEUE_PREFIX: `{crawler_test_cli_unmigrated_${process.pid}}`, REDIS_URL: process.env.REDIS_URL };
      const code = await runCli(args, { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env });
      expect(code, args[0]).toBe(1);
      expect(err, args[0]).toMatch(new RegExp(`^crawl ${args[0]}: the database is not migrated \\(.*does not exist.*\\): run \`npx crawl migrate\` against DATABASE_URL first\n$`));
    }
  });

  it('is what a command that runs workers says, once, before it starts them: `run --until-idle` ends instead of waiting', async () => {
    for (const args of [['run', '--until-idle'], ['crawl', 'https://x.example/']]) {
      const stderr = new PassThrough();
      let err = '';
      stderr.on('data', (d) => (err += String(d)));
      const env = { DATABASE_URL: emptyUrl, QUEUE_PREFIX: `{crawler_test_cli_unmigrated_${process.pid}}`, REDIS_URL: process.env.REDIS_URL, FETCHERS: 'simple_http', LOG_LEVEL: 'warn' };
      const code = await runCli(args, { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env });
      expect(code, args[0]).toBe(1);
      // No worker, reconciler or dispatcher warnings before it (`run` logs at info, hence LOG_LEVEL): they would have
      // started on tables that are not there.
      expect(err, args[0]).toMatch(new RegExp(`^crawl ${args[0]}: the database is not migrated \\(.*does not exist.*\\): run \`npx crawl migrate\` against DATABASE_URL first\n$`));
    }
  }, 60_000);

  it('applies every migration to an empty database, then finds nothing to do', async () => {
    const first = await run(migrate, [], { DATABASE_URL: emptyUrl });
    expect(first.code).toBe(0);
    for (const name of MIGRATIONS) expect(first.out).toContain(`applied ${name}\n`);
    expect(first.out).toMatch(new RegExp(`^${MIGRATIONS.length} applied, 0 already applied$`, 'm'));

    const again = await run(migrate, [], { DATABASE_URL: emptyUrl });
    expect(again).toEqual({ code: 0, out: `0 applied, ${MIGRATIONS.length} already applied\n` });
  });

  it('refuses a DATABASE_URL that is not postgres, naming the variable and the value', async () => {
    await expect(run(migrate, [], { DATABASE_URL: 'mysql://root@localhost/x' })).rejects.toThrow(UsageError);
    await expect(run(migrate, [], { DATABASE_URL: 'mysql://root@localhost/x' })).rejects.toThrow(/DATABASE_URL="mysql:\/\/root@localhost\/x"/);
    await expect(run(migrate, ['--force'], { DATABASE_URL: emptyUrl })).rejects.toThrow(/unexpected arguments: --force/);
  });
});

describe('crawl prune', () => {
  it('deletes attempts older than the retention with their heuristics and keeps the rest', async () => {
    const store = new AttemptStore({ prisma: db.prisma });
    const now = Date.now();
    const base = { url: 'https://old.example/a', fetcher: 'simple_http', success: true, heuristics: [{ type: 'domain', value: 'old.example' }] };
    await store.logAttempt({ ...base, attemptedAt: new Date(now - 40 * DAY_MS) });
    await store.logAttempt({ ...base, attemptedAt: new Date(now - 20 * DAY_MS) });
    const before = await db.prisma.fetcherAttempt.count();
    // Three finished links' events: two 40 days old (one already added to the Redis stream, which is on by default,
    // one not yet), one recent. Only the old streamed one is done with.
    const sql = sqlOf(db.prisma);
    await sql.query("INSERT INTO links (url, initial_url, domain, status) SELECT 'https://old.example/e' || i, 'https://old.example/e' || i, 'old.example', 'done' FROM generate_series(1, 3) i");
    await sql.query("UPDATE link_events SET occurred_at = now() - interval '40 days', streamed_at = CASE WHEN url LIKE '%e1' THEN now() END WHERE url NOT LIKE '%e3'");

    const res = await run(prune, ['--older-than-days', '30'], { DATABASE_URL: db.url });
    expect(res).toEqual({
      code: 0,
      out: 'pruned 1 attempts and 1 heuristics older than 30 days\npruned 1 link events older than 30 days\npruned 0 page versions (kept: the last 10 per page, or younger than 30 days)\n',
    });
    expect(await db.prisma.fetcherAttempt.count()).toBe(before - 1);
    expect(await db.prisma.attemptHeuristic.count({ where: { heuristicValue: 'old.example' } })).toBe(1);
    expect((await sql.query<{ url: string }>('SELECT url FROM link_events ORDER BY url')).map((r) => r.url)).toEqual(['https://old.example/e2', 'https://old.example/e3']);
  });

  it('keeps the last VERSIONS_KEEP versions of a page or those younger than VERSIONS_KEEP_DAYS', async () => {
    const sql = sqlOf(db.prisma);
    const [link] = await sql.query<{ id: string }>("INSERT INTO links (url, initial_url, domain, status) VALUES ('https://old.example/v', 'https://old.example/v', 'old.example', 'done') RETURNING id::text");
    const content = new ContentStore({ prisma: db.prisma });
    for (const n of [1, 2, 3, 4]) await content.save({ linkId: link!.id, body: Buffer.from(`v${n}`), httpStatus: 200, finalUrl: 'https://old.example/v', fetcher: 'simple_http' });
    // Versions 1..3 are 40 days old, 4 is new: with 2 kept per page and 30 days, 1 and 2 go.
    await sql.query("UPDATE fetched_content SET fetched_at = now() - interval '40 days' WHERE link = $1::uuid AND version < 4", [link!.id]);
    const res = await run(prune, [], { DATABASE_URL: db.url, VERSIONS_KEEP: '2', VERSIONS_KEEP_DAYS: '30' });
    expect(res.out).toContain('pruned 2 page versions (kept: the last 2 per page, or younger than 30 days)');
    expect((await db.prisma.fetchedContent.findMany({ where: { linkId: link!.id }, orderBy: { version: 'asc' } })).map((c) => c.version)).toEqual([3, 4]);
    await expect(run(prune, [], { DATABASE_URL: db.url, VERSIONS_KEEP: '0' })).rejects.toThrow(/VERSIONS_KEEP/);
  });

  it('rejects a retention that is not a positive whole number of days', async () => {
    await expect(run(prune, ['--older-than-days', '0'], { DATABASE_URL: db.url })).rejects.toThrow(/positive integer/);
    // A retention past any date is a usage error, not 'Invalid time value' from the database layer.
    await expect(run(prune, ['--older-than-days', '99999999999'], { DATABASE_URL: db.url })).rejects.toThrow(/positive integer up to 36500/);
    await expect(run(prune, [], { DATABASE_URL: db.url, VERSIONS_KEEP_DAYS: '99999999999' })).rejects.toThrow(/VERSIONS_KEEP_DAYS="99999999999"/);
    await expect(run(prune, ['--days', '5'], { DATABASE_URL: db.url })).rejects.toThrow(/unknown argument --days/);
  });
});
