/**
 * The benchmarks' own variables, parsed once with core's `parseEnv` (a bad value names the variable and the value it
 * got). The crawler processes a bench starts read theirs through the pipeline's `loadConfig`, as in production.
 */
import { z } from 'zod';
import { boolVar, envSchema, intVar, parseEnv, redisUrlVar, type EnvSource } from '@crawler/core';

export const BENCH_ENV = {
  /** Redis for the benches that talk to it directly. @defaultValue 'redis://127.0.0.1:6379' */
  REDIS_URL: redisUrlVar().default('redis://127.0.0.1:6379'),
  /** Chromium for the browser bench. @defaultValue '/usr/bin/chromium' */
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  /** Write a V8 CPU profile of each of our crawler processes into this directory. */
  BENCH_PROFILE_DIR: z.string().min(1).optional(),
  /** Keep the crawl bench's database for inspection instead of dropping it. @defaultValue false */
  BENCH_KEEP_DB: boolVar(false),
  /** Set by the crawl bench for each child process it forks: which part of our crawler the child runs. */
  BENCH_ROLE: z.enum(['router', 'fetcher', 'producer']).optional(),
  /** `npm run chaos`: links to crawl. @defaultValue 3000 */
  CHAOS_LINKS: intVar(3000, 1),
  /** `npm run chaos`: hosts they are spread over. @defaultValue 30 */
  CHAOS_HOSTS: intVar(30, 1),
  /** `npm run chaos`: how long Postgres stays stopped, in ms. @defaultValue 15000 */
  CHAOS_PG_DOWN_MS: intVar(15_000, 0),
  /** `npm run chaos`: give up after this many ms. @defaultValue 900000 */
  CHAOS_TIMEOUT_MS: intVar(900_000, 1),
};

const SCHEMA = envSchema(BENCH_ENV);
let parsed: z.output<typeof SCHEMA> | undefined;

/** The bench process's configuration, parsed on first use (`env` for tests). */
export function benchEnv(env: EnvSource = process.env): z.output<typeof SCHEMA> {
  if (env !== process.env) return parseEnv(SCHEMA, env);
  parsed ??= parseEnv(SCHEMA, env);
  return parsed;
}
