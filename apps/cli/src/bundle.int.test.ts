/**
 * What `npx crawl` runs: bin/crawl.js loads the build's bundle (dist/bundle/, scripts/bundle.mjs), not the ~400 modules
 * of dist/. These run the built files as a user does, so they need `npm run build` first (CI builds before testing).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { dropDatabase } from '@crawler/db';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { startTestServer, staticArticle, type TestServer, REDIS_URL } from '@crawler/testkit';
import { assertBundleFresh, runCrawl, type CrawlResult } from './__fixtures__/crawl-process.js';

const PREFIX = `{crawler_test_cli_bundle_${process.pid}}`;

let db: TestDatabase;
let server: TestServer;
let tmp: string;
let hook: string;

function run(args: string[], extraEnv: Record<string, string> = {}, nodeArgs: string[] = []): Promise<CrawlResult> {
  return runCrawl(args, {
    nodeArgs,
    env: {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      FETCH_ALLOW_HOSTS: '127.0.0.1',
      FETCHERS: 'simple_http:4',
      DOMAIN_MIN_DELAY_MS: '0',
      // The response analysis on its thread, whose entry the bundle must hold beside the pool's chunk.
      ANALYSIS_THREADS: '1',
      LOG_LEVEL: 'warn',
      ...extraEnv,
    },
  });
}

beforeAll(async () => {
  assertBundleFresh();
  db = await createTestDatabase('cli_bundle');
  server = await startTestServer({
    '/a': { body: staticArticle({ title: 'A' }) },
    '/b': { body: staticArticle({ title: 'B' }) },
    // Larger than INLINE_FORMAT_BYTES: its text is made on the conversion thread, whose entry the bundle must hold too.
    '/big': { body: staticArticle({ title: 'Big', paragraphs: Array.from({ length: 5_000 }, (_, i) => `Paragraph ${i} of a long page about the harbour, its boats and the tides.`) }) },
  });
  tmp = mkdtempSync(join(tmpdir(), 'crawl-bundle-'));
  // A loader hook that names, on stderr, every file of ours the process loads from a dist/ directory.
  hook = join(tmp, 'register.mjs');
  writeFileSync(join(tmp, 'hooks.mjs'), `export async function resolve(s, c, next) { const r = await next(s, c); if (/\\/(apps|packages)\\/[^/]+\\/dist\\//.test(r.url)) process.stderr.write('LOADED ' + r.url + '\\n'); return r; }\n`);
  writeFileSync(hook, `import { register } from 'node:module'; register(${JSON.stringify(`file://${join(tmp, 'hooks.mjs')}`)});\n`);
}, 60_000);

afterAll(async () => {
  await server?.close();
  const r = createRedisConnection(REDIS_URL, 'producer');
  await deleteRedisPrefix(r, PREFIX);
  r.disconnect();
  await db?.drop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the bundled CLI', () => {
  it('is what bin/crawl.js runs: none of the packages’ dist modules load', async () => {
    const res = await run(['--help'], {}, ['--import', hook]);
    expect(res.code).toBe(0);
    const loaded = res.stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice(7));
    expect(loaded.some((u) => u.endsWith('/apps/cli/dist/bundle/main.js'))).toBe(true);
    expect(loaded.filter((u) => !u.includes('/apps/cli/dist/bundle/'))).toEqual([]);
  });

  it('crawls pages end to end, analysing them on its thread, with nothing on stderr', async () => {
    const res = await run(['crawl', '--json', server.url('/a'), server.url('/b')]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout) as { totals: { links: number; done: number } };
    expect(report.totals).toMatchObject({ links: 2, done: 2 });
    const heuristics = await db.prisma.$queryRawUnsafe<{ n: number }[]>('SELECT count(*)::int AS n FROM attempt_heuristics');
    expect(heuristics[0]!.n).toBeGreaterThan(0);
  }, 60_000);

  // The one run of the demo in the tests: what demo.int.test.ts checked in-process (the second crawl learns and probes
  // less), checked here on the command a user runs, beside what only the bundle can get wrong.
  it("runs the README's main job, `crawl demo`, with every fetcher: the second crawl routes by learned decisions and probes less; the stealth browser's data files load beside the bundle", async () => {
    const database = `crawler_test_cli_bundle_demo_${process.pid}`;
    try {
      const res = await run(['demo', '--json'], {
        DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres', DEMO_DATABASE: database,
        DEMO_QUEUE_PREFIX: `{crawler_test_cli_bundle_demo_${process.pid}}`, DEMO_FIRST_HOST: '127.0.12.2', LOG_LEVEL: 'silent',
      });
      expect(res.code, res.stderr).toBe(0);
      const summary = JSON.parse(res.stdout.trim()) as { crawls: Array<{ learned: number; probes: number; links: Array<{ site: string; fetcher: string | null; outcome: string; tried: string[] }> }> };
      const [first, second] = summary.crawls;
      expect(first!.links).toHaveLength(42);
      expect(second!.links).toHaveLength(24);
      expect(second!.learned).toBeGreaterThan(0);
      expect(second!.probes).toBeLessThan(first!.probes);
      // The human report went to stderr in --json mode and names both crawls and the totals.
      expect(res.stderr).toMatch(/== crawl 2: .*\n[\s\S]*decisions: .*learned=\d+/);
      expect(res.stderr).toMatch(/summary: probes \d+ → \d+/);
      const links = summary.crawls.flatMap((c) => c.links);
      // The walls only the stealth browser passes are passed (a browser_error here was a file missing from the
      // bundle). The rate-limited site may leave a link paused: that is the demo's point, not the bundle's.
      const walls = second!.links.filter((l) => l.fetcher === 'playwright_stealth');
      expect(walls.length).toBeGreaterThan(0);
      expect(walls.filter((l) => l.outcome !== 'done')).toEqual([]);
      expect(links.filter((l) => l.tried.some((t) => t.includes('browser_error')))).toEqual([]);
    } finally {
      await dropDatabase('postgresql://postgres@127.0.0.1:5432/postgres', database);
    }
  }, 180_000);

  it('prints a large page as text, converted on its thread', async () => {
    const crawl = await run(['crawl', '--json', server.url('/big')]);
    expect(crawl.code, crawl.stderr).toBe(0);
    const res = await run(['content', server.url('/big'), '--format', 'text']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Big');
    expect(res.stdout.length).toBeGreaterThan(100_000);
  }, 60_000);

  it('CRAWL_UNBUNDLED=1 runs the modules of dist/ instead', async () => {
    const res = await run(['--help'], { CRAWL_UNBUNDLED: '1' }, ['--import', hook]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('/apps/cli/dist/main.js');
    expect(res.stderr).not.toContain('/dist/bundle/');
  });
});
