/**
 * The CLI's configuration. Every command reads its environment through `cliEnv`, so a bad variable is a usage error
 * (exit 2) that names it and the value it got, secrets masked. Crawling commands use the crawler's schema
 * (`configFrom` in crawler/cli-context.ts); the others declare what they need here. To add a variable, add it to the
 * schema of the command that reads it, with a TSDoc line (see core `config/env.ts`).
 */
import { z } from 'zod';
import { ConfigError, DATABASE_ENV, databaseUrlVar, envSchema, logLevelVar, parseEnv, queuePrefixVar, redisUrlVar, type EnvSource } from '@crawler/core';
import { UsageError } from './command.js';

/** Parse a command's environment with `schema`; a bad value is a UsageError naming the variable. */
export function cliEnv<T>(schema: z.ZodType<T, EnvSource>, env: EnvSource): T {
  try {
    return parseEnv(schema, env);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

const DATABASE_ENV_SCHEMA = envSchema(DATABASE_ENV);

/** DATABASE_URL, for the commands that only touch Postgres (migrate, prune, analytics, route). */
export function databaseUrlFrom(env: EnvSource): string {
  return cliEnv(DATABASE_ENV_SCHEMA, env).databaseUrl;
}

/** The demo's variables: it works in a database and a Redis prefix of its own, never in the crawler's. */
export const DEMO_ENV = {
  /** The Postgres server to use; the demo creates its own database on it (DEMO_DATABASE). */
  DATABASE_URL: databaseUrlVar().default('postgresql://postgres@127.0.0.1:5432/postgres'),
  /** The demo's database, dropped and created again on every run. @defaultValue 'crawler_demo' */
  DEMO_DATABASE: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
    .default('crawler_demo'),
  /** @defaultValue 'redis://127.0.0.1:6379' */
  REDIS_URL: redisUrlVar().default('redis://127.0.0.1:6379'),
  /** The demo's queue prefix, emptied before and after each run. @defaultValue '{crawler_demo}' */
  DEMO_QUEUE_PREFIX: queuePrefixVar('{crawler_demo}'),
  /** @defaultValue '/usr/bin/chromium' */
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  /** Loopback address of the first demo site; the others follow it. @defaultValue '127.0.10.2' */
  DEMO_FIRST_HOST: z
    .string()
    .regex(/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/, 'must be an address in 127.0.0.0/8')
    .default('127.0.10.2'),
  /** @defaultValue 'warn' */
  LOG_LEVEL: logLevelVar('warn'),
};

export const DEMO_ENV_SCHEMA = envSchema(DEMO_ENV);

/** The demo's configuration: each DEMO_ENV variable under its camelCase name. */
export type DemoEnv = z.output<typeof DEMO_ENV_SCHEMA>;
