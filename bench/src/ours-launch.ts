/**
 * How the bench starts our crawler: one router process and one fetch-worker process (plus a producer process that
 * only enqueues), each a forked `ours-child.js` built from the pipeline's exported runtime, configured only through
 * the environment the pipeline's `loadConfig` reads.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { forkRpcChild, type RpcChild } from './child-rpc.js';
import { benchEnv } from './env.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, 'ours-child.js');
const PIPELINE_DIST = resolve(HERE, '..', '..', 'packages', 'pipeline', 'dist', 'index.js');

/** Why our crawler cannot be started (null when it can). */
export async function oursLaunchProblem(): Promise<string | null> {
  if (!existsSync(PIPELINE_DIST)) return `${PIPELINE_DIST} is not built`;
  try {
    const pipeline = (await import('@crawler/pipeline')) as Record<string, unknown>;
    if (typeof pipeline.createRuntime !== 'function' || typeof pipeline.loadConfig !== 'function') return '@crawler/pipeline does not export createRuntime and loadConfig';
  } catch (err) {
    return `@crawler/pipeline does not load (${(err as Error).message.split('\n')[0]})`;
  }
  return null;
}

/** Connection and sizing of one bench run of our crawler. */
export interface OursEnv {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  concurrency: number;
}

/** The running processes. */
export interface OursProcesses {
  /** Pids of the router, fetcher and producer processes, in that order (for CPU and memory from /proc). */
  pids(): number[];
  alive(): boolean;
  /** Enqueue URLs through the producer; resolves once the links are stored and their route jobs added. */
  enqueue(urls: string[]): Promise<{ accepted: number; rejected: number }>;
  /** Drain and close every process. */
  stop(): Promise<void>;
}

/**
 * The environment every process gets: learning mode on (the default, stated anyway), plain HTTP only at the shared
 * concurrency, loopback allowed, and politeness matched to Crawlee's defaults (no per-domain delay, no per-domain
 * concurrency cap below the global one) so the comparison measures machinery, not manners. robots.txt stays on, as
 * a user would run it: one request per domain, reported separately.
 */
export function crawlerEnv(env: OursEnv): Record<string, string> {
  return {
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    QUEUE_PREFIX: env.queuePrefix,
    LEARNING_MODE_ENABLED: 'true',
    FETCHERS: `simple_http:${env.concurrency}`,
    ROUTER_CONCURRENCY: String(env.concurrency),
    ALLOW_PRIVATE_NETWORKS: 'true',
    DOMAIN_MIN_DELAY_MS: '0',
    DOMAIN_MAX_CONCURRENCY: String(env.concurrency),
    LOG_LEVEL: 'warn',
  };
}

async function waitForWorkers(redisUrl: string, prefix: string, queues: string[], timeoutMs: number): Promise<void> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const handles = queues.map((q) => new Queue(q, { connection, prefix }));
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const counts = await Promise.all(handles.map((h) => h.getWorkersCount()));
      if (counts.every((n) => n > 0)) return;
      if (Date.now() > deadline) throw new Error(`workers did not start within ${timeoutMs} ms (${queues.map((q, i) => `${q}: ${counts[i]}`).join(', ')})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await Promise.all(handles.map((h) => h.close()));
    connection.disconnect();
  }
}

/** `BENCH_PROFILE_DIR=/tmp/prof` writes a V8 CPU profile of each of our processes there (open in Chrome DevTools). */
function profileArgs(role: string): string[] {
  const dir = benchEnv().benchProfileDir;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=ours-${role}-${Date.now()}.cpuprofile`] : [];
}

/** Start the router, the fetch worker and the producer, and wait until both workers consume their queues. */
export async function startOursProcesses(env: OursEnv): Promise<OursProcesses> {
  const base = { ...process.env, ...crawlerEnv(env) };
  const roles = ['router', 'fetcher', 'producer'] as const;
  const children = new Map<string, RpcChild>();
  const processes: OursProcesses = {
    pids: () => roles.map((r) => children.get(r)?.pid ?? -1),
    alive: () => [...children.values()].every((c) => c.alive()),
    enqueue: (urls) => children.get('producer')!.call('enqueue', urls),
    // Producer first (nothing more comes in), then the router, then the fetcher drains what is in flight.
    stop: async () => {
      for (const role of ['producer', 'router', 'fetcher']) await children.get(role)?.stop(30_000);
    },
  };
  try {
    for (const role of roles) {
      const child = forkRpcChild(CHILD, { ...base, BENCH_ROLE: role }, profileArgs(role));
      children.set(role, child);
      await child.call('start');
    }
    await waitForWorkers(env.redisUrl, env.queuePrefix, ['route', 'fetch-simple_http'], 60_000);
  } catch (err) {
    await processes.stop();
    throw err;
  }
  return processes;
}
