/**
 * The README's `npx crawl …` lines, run AS WRITTEN from a clean clone of this repository set up as README says
 * (`npm install` as `.ci/setup` runs it). To spare a 2-core machine, the clone reuses this checkout's installed
 * node_modules (copied, without the workspace links and bins npm makes, which the install must recreate) and its
 * built dist/ directories instead of building again. npx runs offline: a command that did not resolve to our CLI
 * would fail here instead of offering to install some registry package.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `{crawler_test_cli_readme_${process.pid}}`;

/**
 * Every `npx crawl` command line of README.md: the lines of its code blocks, and the inline ones that take no
 * placeholder (`<id>`, `[--opt]`, `a|b`). `events dispatch` runs until a signal, so it is left out.
 */
export function readmeCommands(readme: string): string[] {
  const out: string[] = [];
  let inBlock = false;
  for (const line of readme.split('\n')) {
    if (line.startsWith('```')) inBlock = !inBlock;
    else if (inBlock && line.trim().startsWith('npx crawl')) out.push(line.trim());
  }
  for (const m of readme.matchAll(/`(npx crawl [^`]*)`/g)) {
    const cmd = m[1]!;
    if (!/[<>[\]|]/.test(cmd) && cmd !== 'npx crawl events dispatch' && !out.includes(cmd)) out.push(cmd);
  }
  return out;
}

let work: string;
let clone: string;
let db: TestDatabase;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'crawl-readme-'));
  clone = join(work, 'repo');
  execFileSync('git', ['clone', '--quiet', REPO, clone]);
  // Installed packages as `npm install` left them here, minus what npm derives from the workspaces.
  cpSync(join(REPO, 'node_modules'), join(clone, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  rmSync(join(clone, 'node_modules/.bin'), { recursive: true, force: true });
  rmSync(join(clone, 'node_modules/@crawler'), { recursive: true, force: true });
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: clone, stdio: 'pipe' });
  // The build's output, instead of building again.
  for (const group of ['packages', 'apps']) {
    for (const ws of readdirSync(join(REPO, group))) {
      const dist = join(REPO, group, ws, 'dist');
      if (existsSync(dist)) cpSync(dist, join(clone, group, ws, 'dist'), { recursive: true });
    }
  }
  cpSync(join(REPO, 'packages/db/src/generated'), join(clone, 'packages/db/src/generated'), { recursive: true });
  db = await createTestDatabase('cli_readme');
  // `crawl crawl urls.txt` reads the user's file of URLs.
  writeFileSync(join(clone, 'urls.txt'), 'https://example.com/a\n# a comment\nhttps://example.net/\n');
  // `crawl enqueue --max-age 6h --file seeds.txt` reads a producer's seed list.
  writeFileSync(join(clone, 'seeds.txt'), 'https://example.com/a\nhttps://example.org/\n');
  // `crawl enqueue --priority 100 --file backfill.txt`: a backfill behind everyday work.
  writeFileSync(join(clone, 'backfill.txt'), 'https://example.com/old/1\nhttps://example.com/old/2\n');
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
  const redis = createRedisConnection(REDIS_URL, 'producer');
  await deleteRedisPrefix(redis, PREFIX);
  redis.disconnect();
  await db?.drop();
}, 300_000);

function sh(line: string): { status: number | null; out: string; stdout: string } {
  const r = spawnSync('bash', ['-c', line], {
    cwd: clone,
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, LOG_LEVEL: 'error',
      // This machine has no internet: every example.* site is down, so its links fail after a short budget.
      UNREACHABLE_PAUSE_BASE_MS: '100', ROBOTS_UNREACHABLE_TTL_MS: '50', MAX_ATTEMPTS: '2',
      npm_config_offline: 'true', npm_config_update_notifier: 'false',
    },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
}

describe("README's npx crawl commands", () => {
  it('finds the command lines', () => {
    const cmds = readmeCommands(readFileSync(join(REPO, 'README.md'), 'utf8'));
    expect(cmds).toContain('npx crawl explain https://example.com/page                          # heuristics, every fetcher\'s score, the decision');
    expect(cmds).toContain('npx crawl --help');
    expect(cmds.length).toBeGreaterThanOrEqual(5);
  });

  it('npm install links node_modules/.bin/crawl to our CLI in a fresh clone', () => {
    expect(realpathSync(join(clone, 'node_modules/.bin/crawl'))).toBe(realpathSync(join(clone, 'apps/cli/bin/crawl.js')));
  });

  it('runs each one, as written, with our CLI', () => {
    const cmds = readmeCommands(readFileSync(join(clone, 'README.md'), 'utf8'));
    for (const line of cmds) {
      const { status, out, stdout } = sh(line);
      expect(out, line).not.toMatch(/Need to install|npm error|could not determine executable/i);
      const what = line.replace(/\s+#.*$/, '');
      if (what === 'npx crawl --help') expect([status, out], line).toEqual([0, expect.stringMatching(/usage: crawl <command>/)]);
      else if (what.startsWith('npx crawl explain')) expect([status, out], line).toEqual([0, expect.stringMatching(/url {8}https:\/\/example\.com\/page[\s\S]*decision {3}probe/)]);
      else if (what.includes('--json')) expect(JSON.parse(stdout), line).toMatchObject({ links: expect.arrayContaining([expect.objectContaining({ url: 'https://example.net/' })]) });
      // Our crawl's summary (the sites are down here, so the links end failed or paused, not done).
      else if (what.startsWith('npx crawl crawl')) expect(out, line).toMatch(/\d+ links?: \d+ done, \d+ failed, \d+ paused/);
      else expect([status, out], line).toEqual([0, expect.any(String)]);
    }
  }, 600_000);
});
