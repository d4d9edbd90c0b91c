import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `npx crawl` runs: bin/crawl.js, which loads the build's bundle (dist/bundle/). */
export const CRAWL_BIN = fileURLToPath(new URL('../../bin/crawl.js', import.meta.url));

const CLI = fileURLToPath(new URL('../../', import.meta.url));
const BUNDLE = join(CLI, 'dist/bundle/main.js');
const PACKAGES = fileURLToPath(new URL('../../../../packages/', import.meta.url));

/** How a `crawl` process ended and what it wrote. */
export interface CrawlResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A `crawl` process under way. */
export interface CrawlProcess {
  child: ChildProcess;
  /** Resolves once the process has exited and its streams are closed. */
  done: Promise<CrawlResult>;
  /** What it wrote to stdout so far. */
  stdout(): string;
  /** What it wrote to stderr so far. */
  stderr(): string;
}

export interface StartCrawlOptions {
  /** Variables over the test process's environment; an undefined value removes one. */
  env?: Record<string, string | undefined>;
  /** Start from an empty environment (PATH kept) instead of the test process's. @defaultValue false */
  cleanEnv?: boolean;
  /** Written to the child's stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  /** Node options before the script (`--import` a loader hook). */
  nodeArgs?: string[];
}

/**
 * Start `crawl args…` as a user runs it: node bin/crawl.js in a child process. The bundle starts in about a third of the
 * CPU of the sources through tsx (about 0.6 s against 2 s a command on this machine), and it is what `npx crawl` runs;
 * a bundle older than the sources it is built from fails the test instead of testing yesterday's code.
 */
export function startCrawl(args: string[], opts: StartCrawlOptions = {}): CrawlProcess {
  assertBundleFresh();
  const env: Record<string, string | undefined> = { ...(opts.cleanEnv ? { PATH: process.env.PATH } : process.env), ...opts.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), CRAWL_BIN, ...args], {
    env,
    stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += String(d)));
  child.stderr!.on('data', (d) => (stderr += String(d)));
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  const done = new Promise<CrawlResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done, stdout: () => stdout, stderr: () => stderr };
}

/** {@link startCrawl}, resolved once the process has ended. */
export function runCrawl(args: string[], opts: StartCrawlOptions = {}): Promise<CrawlResult> {
  return startCrawl(args, opts).done;
}

let checked = false;

/**
 * Throw unless dist/bundle/main.js is newer than the CLI's sources and every package's build it bundles. Under turbo the
 * CLI's test task depends on its build (apps/cli/turbo.json); this catches a bare `npx vitest run` after an edit.
 */
export function assertBundleFresh(): void {
  if (checked) return;
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run \`npm run build\` at the repository's root first`);
  const built = statSync(BUNDLE).mtimeMs;
  const newer = [...sourceFiles(join(CLI, 'src')), ...packageBuilds()].filter((f) => statSync(f).mtimeMs > built);
  if (newer.length > 0) throw new Error(`${BUNDLE} is older than ${newer[0]}${newer.length > 1 ? ` and ${newer.length - 1} more` : ''}: run \`npm run build\` at the repository's root first`);
  checked = true;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory() && e.name !== '__fixtures__') yield* sourceFiles(path);
    else if (e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) yield path;
  }
}

function* packageBuilds(): Generator<string> {
  for (const pkg of readdirSync(PACKAGES)) {
    const dist = join(PACKAGES, pkg, 'dist');
    if (existsSync(dist)) yield* jsFiles(dist);
  }
}

function* jsFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* jsFiles(path);
    else if (e.isFile() && e.name.endsWith('.js')) yield path;
  }
}
