import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, LINK_STATUSES } from '@crawler/core';
import { FINISHED_STATUSES, IN_PROGRESS_STATUSES, NOT_EVIDENCE_CODES } from './sql-lists.js';

// The SQL of this package builds its status and error-code lists from core's constants; migrations cannot (they are
// frozen once applied), so this test reads them and fails when core's tables and the SQL written down drift apart.
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const migrationsDir = join(root, 'prisma', 'migrations');

/** The crawls table's own statuses (not link statuses): written only by CrawlStore. */
const CRAWL_STATUSES = ['running', 'cancelled'];
const LINK_STATUS_VALUES: string[] = Object.values(LINK_STATUSES);

function migrations(): Array<{ name: string; sql: string }> {
  return readdirSync(migrationsDir)
    .filter((d) => statSync(join(migrationsDir, d)).isDirectory())
    .sort()
    .map((d) => ({ name: d, sql: stripSqlComments(readFileSync(join(migrationsDir, d, 'migration.sql'), 'utf8')) }));
}

function stripSqlComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, '');
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' || name === 'node_modules' || name === 'dist' || name === '__fixtures__' ? [] : tsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Quoted literals compared with `column` (=, <>, IS [NOT] DISTINCT FROM, [NOT] IN (...)), as lists. */
function literalsComparedWith(sql: string, column: string): string[][] {
  const re = new RegExp(`\\b${column}"?\\s*(?:=|<>|!=|IS\\s+(?:NOT\\s+)?DISTINCT\\s+FROM|(?:NOT\\s+)?IN\\s*\\()\\s*((?:'[^']*'\\s*,?\\s*)+)`, 'gi');
  return [...sql.matchAll(re)].map((m) => [...m[1]!.matchAll(/'([^']*)'/g)].map((l) => l[1]!));
}

describe('SQL literals against core constants', () => {
  it('every link status written in a migration is one of LINK_STATUSES (or a crawl status)', () => {
    const found = migrations().flatMap((m) => literalsComparedWith(m.sql, 'status').flat());
    expect(found.length).toBeGreaterThan(0);
    for (const s of found) expect([...LINK_STATUS_VALUES, ...CRAWL_STATUSES]).toContain(s);
  });

  it("the unfinished-links index predicate is IN_PROGRESS_STATUSES, the outbox trigger's is FINISHED_STATUSES", () => {
    const all = migrations();
    const lastIndex = all.filter((m) => m.sql.includes('"idx_links_unfinished_updated" ON')).at(-1)!;
    const predicate = /"idx_links_unfinished_updated" ON[^;]*WHERE\s+"status"\s+IN\s*\(([^)]*)\)/.exec(lastIndex.sql);
    expect(predicate, lastIndex.name).not.toBeNull();
    expect([...predicate![1]!.matchAll(/'([^']*)'/g)].map((l) => l[1]).sort()).toEqual([...IN_PROGRESS_STATUSES].sort());

    // The last migration that creates the trigger (a later one may replace only its function, `RETURNS trigger`).
    const events = all.filter((m) => /CREATE\s+(?:OR\s+REPLACE\s+)?TRIGGER[^;]*link_events/i.test(m.sql) || m.name.endsWith('_link_events')).at(-1)!;
    const lists = literalsComparedWith(events.sql, 'NEW\\."status').filter((l) => l.length > 1);
    expect(lists.length).toBeGreaterThan(0);
    for (const l of lists) expect([...l].sort()).toEqual([...FINISHED_STATUSES].sort());
  });

  it('the error types the migrations single out are exactly the codes ERROR_POLICY says are no tool evidence', () => {
    const found = new Set(migrations().flatMap((m) => literalsComparedWith(m.sql, 'error_type').flat()));
    for (const code of found) expect(ERROR_CODES).toContain(code);
    expect([...found].sort()).toEqual([...NOT_EVIDENCE_CODES].sort());
  });

  it("this package's statements take link statuses and error codes from the constants, not from literals", () => {
    for (const file of tsFiles(join(here))) {
      const text = readFileSync(file, 'utf8');
      // '${…}' is a constant interpolated into the statement: what this test asks for.
      const literal = (l: string) => !l.startsWith('${');
      for (const s of literalsComparedWith(text, 'status').flat().filter(literal)) expect(CRAWL_STATUSES, relative(root, file)).toContain(s);
      expect(literalsComparedWith(text, 'error_type').flat().filter(literal), relative(root, file)).toEqual([]);
    }
  });
});

// The tables are packages/db's: any other production file that names one in a statement, or calls a Prisma model,
// bypasses the stores (tests, fixtures and bench may use them directly).
const TABLES = ['links', 'crawls', 'crawl_frontier', 'crawl_hosts', 'fetcher_attempts', 'attempt_heuristics', 'heuristic_rollups', 'heuristic_rollup_types', 'fetcher_router', 'fetched_content', 'link_events'];
const MODELS = ['link', 'crawl', 'crawlFrontier', 'crawlHost', 'fetcherAttempt', 'attemptHeuristic', 'heuristicRollup', 'heuristicRollupType', 'fetcherRoute', 'fetchedContent', 'linkEvent'];

describe('packages/db owns the tables', () => {
  it('no production code outside packages/db writes SQL against them or calls a Prisma model', () => {
    const statement = new RegExp(`\\b(?:FROM|JOIN|UPDATE|INSERT\\s+INTO|DELETE\\s+FROM)\\s+"?(?:${TABLES.join('|')})\\b`, 'i');
    const modelCall = new RegExp(`\\bprisma\\??\\.(?:${MODELS.join('|')}|\\$queryRaw\\w*|\\$executeRaw\\w*)\\b`);
    const offenders: string[] = [];
    for (const group of ['packages', 'apps']) {
      for (const pkg of readdirSync(join(root, group))) {
        if (group === 'packages' && pkg === 'db') continue;
        const src = join(root, group, pkg, 'src');
        if (!statSync(src, { throwIfNoEntry: false })?.isDirectory()) continue;
        for (const file of tsFiles(src)) {
          const text = readFileSync(file, 'utf8');
          if (statement.test(text) || modelCall.test(text)) offenders.push(relative(root, file));
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});
