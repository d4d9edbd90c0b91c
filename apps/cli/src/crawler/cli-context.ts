import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { CRAWLER_ENV_SCHEMA, assertBrowserExecutable, createRuntime, onShutdownSignal, type CrawlerConfig, type CrawlerRuntime, type RuntimeOverrides } from '@crawler/pipeline';
import { RedisSetupError, assertRedisDatabase } from '@crawler/queue';
import { isSchemaMissingError } from '@crawler/db';
// The logging entry alone: the package's index also loads prom-client (and OpenTelemetry's API), ~0.1 s a command.
import { createLogger } from '@crawler/telemetry/logging';
import { ConfigError, type Logger } from '@crawler/core';
import { InterruptedError, UsageError, type CommandIO } from '../command.js';
import { cliEnv } from '../env.js';

/** The crawler's configuration from the command's environment; a bad value is a usage error naming the variable. */
export function configFrom(io: CommandIO, overrides: Record<string, string> = {}): CrawlerConfig {
  return cliEnv(CRAWLER_ENV_SCHEMA, { ...io.env, ...overrides });
}

/**
 * The configuration of a command that prints its own account (`crawl crawl`: a progress bar and a report of every
 * link; `enqueue`, `pauses`, `reconcile`, `stats`, …: their results): logs default to `warn`, not the workers' `info`,
 * whose lines repeat the report, scroll a progress bar away, or add a `crawler closed` to every one-shot command.
 * LOG_LEVEL set in the environment wins. `crawl run` (the workers) keeps `info`.
 */
export function reportingConfigFrom(io: CommandIO): CrawlerConfig {
  return configFrom(io, io.env.LOG_LEVEL ? {} : { LOG_LEVEL: 'warn' });
}

/**
 * The CLI's logger. Logs go to stderr so stdout carries only results (`--json` output stays parseable);
 * pretty on a terminal, JSON otherwise; cookies and authorization redacted (telemetry's createLogger).
 */
export function cliLogger(io: CommandIO, level: string): Logger {
  const stderr = io.stderr as NodeJS.WritableStream & { isTTY?: boolean };
  return createLogger({ name: 'crawl', level, pretty: stderr.isTTY === true, destination: stderr as never }) as unknown as Logger;
}

/**
 * URLs from arguments, then files (`--file F`, `-` for stdin), or stdin when neither is given, in parts of at most
 * `part` as they are read: a producer's list of millions of lines is never held whole (`crawl enqueue`).
 */
export async function* urlParts(io: CommandIO, opts: { urls: string[]; files: string[]; stdinWhenEmpty: boolean }, part: number): AsyncGenerator<string[]> {
  let buf: string[] = [];
  const take = function* (line: string): Generator<string[]> {
    buf.push(line);
    if (buf.length >= part) {
      yield buf;
      buf = [];
    }
  };
  for (const url of opts.urls) yield* take(url);
  const sources: Array<{ name: string; open: () => NodeJS.ReadableStream }> = opts.files.map((file) => ({ name: file, open: () => (file === '-' ? io.stdin : createReadStream(file)) }));
  if (opts.urls.length === 0 && opts.files.length === 0 && opts.stdinWhenEmpty) {
    if (io.stdin.isTTY) throw new UsageError('no URLs given (pass URLs, --file F, or pipe them on stdin)');
    sources.push({ name: '-', open: () => io.stdin });
  }
  for (const source of sources) {
    const lines = linesOf(source.open());
    for (;;) {
      let next: IteratorResult<string>;
      try {
        next = await lines.next();
      } catch (err) {
        throw new UsageError(`cannot read ${source.name}: ${(err as Error).message}`);
      }
      if (next.done) break;
      yield* take(next.value);
    }
  }
  if (buf.length > 0) yield buf;
}

/** Non-empty, non-comment lines of a stream: one URL per line, `#` starts a comment. */
async function* linesOf(stream: NodeJS.ReadableStream): AsyncGenerator<string> {
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
    const t = line.trim();
    if (t !== '' && !t.startsWith('#')) yield t;
  }
}

/** URLs from arguments, files (`--file F`, or any argument without "://" for `crawl crawl`), or stdin, all of them. */
export async function collectUrls(io: CommandIO, opts: { urls: string[]; files: string[]; stdinWhenEmpty: boolean }): Promise<string[]> {
  const urls: string[] = [];
  // Not push(...part) over the whole list: a spread of some 120,000 lines or more overflows the call stack.
  for await (const part of urlParts(io, opts, 5_000)) for (const url of part) urls.push(url);
  return urls;
}

/**
 * The crawler's runtime for a command, once its Redis is known to use the database REDIS_URL names (ioredis would
 * silently use database 0 when the server has no such database): a usage error naming REDIS_URL otherwise. It
 * waits for Redis while it is down; a SIGTERM or SIGINT meanwhile closes the runtime and rejects with an
 * InterruptedError (the command has started nothing yet), instead of the signal killing the process.
 * `beforeRedis` runs once the runtime exists, before that wait (`crawl run`'s /healthz answers while Redis is down);
 * what it returns is closed with the runtime when opening fails or is interrupted.
 */
export async function openRuntime(config: CrawlerConfig, overrides: RuntimeOverrides = {}, hooks: OpenRuntimeHooks = {}): Promise<CrawlerRuntime> {
  const runtime = createRuntime(config, overrides);
  let opened: Closable | null = null;
  try {
    opened = (await hooks.beforeRedis?.(runtime)) ?? null;
  } catch (err) {
    await runtime.close();
    throw err;
  }
  const close = async () => {
    await opened?.close();
    await runtime.close();
  };
  // The PING waits for a Redis that is down (a worker connection retries forever): here, not in startWorkers, where
  // a signal would leave the workers' close waiting for it too.
  await waitForRedisUnlessSignalled(runtime.redis, close);
  await failUnlessMigrated(runtime, close);
  return runtime;
}

interface Closable {
  close(): Promise<void>;
}

export interface OpenRuntimeHooks {
  /** Started before the wait for Redis; closed with the runtime if the command does not get past it. */
  beforeRedis?: (runtime: CrawlerRuntime) => Promise<Closable | null>;
}

/**
 * Reject, after closing the runtime, when the database was never migrated: the command then ends with the CLI's one
 * line that says to run `crawl migrate`, before its workers, reconciler and event dispatcher start on missing tables
 * (each would log a warning a second, and `run --until-idle` would wait for ever). A Postgres that does not answer
 * is left to the command, which waits for it.
 */
async function failUnlessMigrated(runtime: CrawlerRuntime, close: () => Promise<void>): Promise<void> {
  try {
    await runtime.pingPostgres();
  } catch (err) {
    if (!isSchemaMissingError(err)) return;
    await close();
    throw err;
  }
}

/**
 * Wait until `redis` answers and uses the database it was given (checkRedisDatabase, then a PING), for a command
 * that must not start before. A SIGTERM or SIGINT meanwhile runs `close` and rejects with an InterruptedError; so
 * does any failure of the check, after `close`. The signal handler is held until `close` is done, so a second
 * Ctrl-C during it does not kill the process either.
 */
export async function waitForRedisUnlessSignalled(redis: Parameters<typeof assertRedisDatabase>[0], close: () => Promise<void>): Promise<void> {
  let interrupt: (signal: NodeJS.Signals) => void = () => {};
  const interrupted = new Promise<never>((_, reject) => {
    interrupt = (signal) => reject(new InterruptedError(`${signal} while waiting for Redis: nothing was started`));
  });
  const release = onShutdownSignal(interrupt);
  try {
    await Promise.race([checkRedisDatabase(redis).then(() => redis.ping()), interrupted]);
  } catch (err) {
    await close();
    throw err;
  } finally {
    release();
  }
}

/**
 * For a command that runs fetch workers (`fetchers`: the ones it starts, every configured one when absent): a usage
 * error naming CHROMIUM_PATH when a browser fetcher is among them and Chromium cannot be launched from there, before
 * any connection is opened (the browser would otherwise fail the first browser page, not the command).
 */
export function checkBrowserExecutable(config: CrawlerConfig, fetchers?: readonly string[]): void {
  const served = config.fetchers.map((f) => f.name).filter((f) => !fetchers || fetchers.includes(f));
  try {
    assertBrowserExecutable(config.chromiumPath, served);
  } catch (err) {
    throw err instanceof ConfigError ? new UsageError(err.message) : err;
  }
}

/** assertRedisDatabase for a command's own connection: a usage error naming REDIS_URL (or REDIS_CLUSTER_NODES) when Redis is not what it says. */
export async function checkRedisDatabase(redis: Parameters<typeof assertRedisDatabase>[0]): Promise<void> {
  try {
    await assertRedisDatabase(redis);
  } catch (err) {
    throw err instanceof RedisSetupError ? new UsageError(err.message) : err;
  }
}
