/**
 * Environment variables: the building blocks every process kind composes its configuration from.
 *
 * HOW TO ADD A VARIABLE (a one-place edit): add `NAME: <schema>` with a one-line TSDoc to the concern it belongs to
 * (the crawler's concerns in @crawler/pipeline `config/crawler-config.ts`, a process's own in its app's `env.ts`).
 * Its parsed value then appears, typed, as `config.<camelCase of NAME>` (`FETCH_ALLOW_HOSTS` → `fetchAllowHosts`):
 * the names map mechanically, the type comes from the schema (`z.infer`), and there is no interface to copy or
 * mapping to write. Errors name the variable and the value it got; a variable whose name says it is a secret
 * (PASSWORD, SECRET, TOKEN, API_KEY(S)) shows as `(hidden)` and a URL's password as `***`, so adding a secret needs
 * no extra step either. `parseEnv` is the one function that turns an environment into configuration.
 */
import { z } from 'zod';
import { CrawlerError } from '../contracts/errors.js';
import { redactCredentials } from '../exits/exit-tiers.js';

/** An environment as a process receives it (`process.env`, or a test's plain object). */
export type EnvSource = Record<string, string | undefined>;

/** A concern's variables: environment name → zod schema of its (string or missing) value. */
export type EnvVars = Record<string, z.ZodType>;

type Words<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Capitalize<Lowercase<Head>>}${Words<Tail>}` : Capitalize<Lowercase<S>>;
/** `FETCH_TIMEOUT_MS` → `fetchTimeoutMs`, at the type level. */
export type CamelCaseEnvName<S extends string> = Uncapitalize<Words<S>>;

/** The parsed configuration of a set of variables: each under its camelCase name, typed from its schema. */
export type EnvConfig<V extends EnvVars> = { [K in keyof V & string as CamelCaseEnvName<K>]: z.output<V[K]> };

/** `FETCH_TIMEOUT_MS` → `fetchTimeoutMs`. */
export function camelCaseEnvName(name: string): string {
  return name.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** One bad variable: its name, the value it got as shown to people (secrets masked), and what is wrong with it. */
export interface ConfigIssue {
  variable: string;
  shownValue: string;
  message: string;
}

/** A bad configuration value. The message names each variable and the value it got; `issues` keeps them as data. */
export class ConfigError extends CrawlerError {
  override name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    super('invalid_config', `invalid configuration: ${issues.map((i) => `${i.variable}=${i.shownValue}: ${i.message}`).join('; ')}`);
    this.issues = issues;
  }
}

const SECRET_NAME = /PASSWORD|SECRET|TOKEN|API_KEYS?$|PRIVATE_KEY/;

/** A variable's value as it may appear in an error or a log: `(unset)`, `(hidden)` for secrets, a URL's password as `***`. */
export function showEnvValue(name: string, value: string | undefined): string {
  if (value === undefined) return '(unset)';
  if (SECRET_NAME.test(name)) return '(hidden)';
  // Proxy lists carry many URLs, each with its own credentials (and sticky-session usernames name the account).
  if (name.includes('PROXY')) return JSON.stringify(redactCredentials(value));
  return JSON.stringify(maskUrlPassword(value));
}

function maskUrlPassword(value: string): string {
  if (!value.includes('@')) return value;
  try {
    const u = new URL(value);
    if (u.password === '') return value;
    u.password = '***';
    return u.toString();
  } catch {
    // Not a URL WHATWG can read, but it may still carry `user:password@`: mask what sits between ':' and the last '@'
    // before the path (a password may hold an '@' of its own).
    return value.replace(/(\/\/[^:/@\s]*:)[^/\s]*@/, '$1***@');
  }
}

/** Every variable of a set, under its environment name, as its schema parsed it. */
export type EnvValuesOf<V extends EnvVars> = { [K in keyof V]: z.output<V[K]> };

/**
 * A concern whose configuration needs more than its variables one by one: `finish` computes defaults from other
 * variables (a router as wide as the fetchers it feeds); `check` states rules across them (a webhook URL needs a
 * secret), adding issues with `path: ['NAME']`; it runs once every variable parsed on its own. Use a group wherever a
 * plain variables object would go.
 */
export interface EnvGroup<V extends EnvVars = EnvVars, T = EnvConfig<V>> {
  readonly vars: V;
  readonly finish: (config: EnvConfig<V>) => T;
  readonly check?: (values: EnvValuesOf<V>, ctx: z.RefinementCtx) => void;
}

/** A concern's variables plus the steps that turn their values into its configuration. */
export function envGroup<V extends EnvVars, T = EnvConfig<V>>(
  vars: V,
  finish: (config: EnvConfig<V>) => T = (config) => config as unknown as T,
  check?: (values: EnvValuesOf<V>, ctx: z.RefinementCtx) => void,
): EnvGroup<V, T> {
  return { vars, finish, ...(check ? { check } : {}) };
}

/** A concern: its variables, or an EnvGroup. */
// `any`: a group's finish takes its own variables' config, so no narrower type is assignable from every group.
type AnyEnvGroup = EnvGroup<any, any>;
export type EnvConcern = EnvVars | AnyEnvGroup;
type ConcernVars<C> = C extends EnvGroup<infer V, infer _T> ? V : C;
/** The configuration a concern yields. */
export type ConcernConfig<C> = C extends EnvGroup<infer _V, infer T> ? T : C extends EnvVars ? EnvConfig<C> : never;

function isGroup(c: EnvConcern): c is AnyEnvGroup {
  return typeof (c as { finish?: unknown }).finish === 'function' && typeof (c as { vars?: unknown }).vars === 'object';
}

function configOf(concern: EnvConcern, parsed: Record<string, unknown>): unknown {
  const vars = isGroup(concern) ? concern.vars : concern;
  const config = renameKeys(Object.fromEntries(Object.keys(vars).map((name) => [name, parsed[name]])));
  return isGroup(concern) ? concern.finish(config as never) : config;
}

function withGroupChecks(object: z.ZodObject<EnvVars>, concerns: EnvConcern[]): z.ZodObject<EnvVars> {
  let out = object;
  for (const c of concerns) if (isGroup(c) && c.check) out = out.superRefine((values, ctx) => c.check!(values as never, ctx));
  return out;
}

/** The schema of one concern: reads its variables from an environment, yields them under their camelCase names. */
export function envSchema<C extends EnvConcern>(concern: C): z.ZodType<ConcernConfig<C>, EnvSource> {
  const vars = isGroup(concern) ? concern.vars : (concern as EnvVars);
  return withGroupChecks(z.object(vars), [concern]).transform((parsed) => configOf(concern, parsed as Record<string, unknown>) as ConcernConfig<C>) as unknown as z.ZodType<ConcernConfig<C>, EnvSource>;
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type AllVars<G extends Record<string, EnvConcern>> = UnionToIntersection<ConcernVars<G[keyof G]>>;
/** Every variable of several concerns, under its environment name, as its schema parsed it. */
export type EnvValues<G extends Record<string, EnvConcern>> = {
  [K in keyof AllVars<G> & string]?: AllVars<G>[K] extends z.ZodType ? z.output<AllVars<G>[K]> : never;
};

/**
 * Several concerns read from one environment in one pass, each under its own key:
 * `composeEnv({ crawler: CRAWLER, worker: WORKER_ENV })` → `{ crawler: {...}, worker: {...} }`. A variable two
 * concerns share is read by the schema of the one named last.
 *
 * `check` states rules across variables (`ctx.addIssue({ code: 'custom', path: ['NAME'], message })`). It runs even when
 * other variables are bad, so every problem is reported at once; a variable that failed its own schema holds no usable
 * value there, so rules should read variables whose schema cannot fail, or test the type of what they read.
 */
export function composeEnv<G extends Record<string, EnvConcern>>(
  groups: G,
  check?: (values: EnvValues<G>, ctx: z.RefinementCtx) => void,
): z.ZodType<{ [K in keyof G]: ConcernConfig<G[K]> }, EnvSource> {
  const all: EnvVars = Object.assign({}, ...Object.values(groups).map((c) => (isGroup(c) ? c.vars : c))) as EnvVars;
  const checked = withGroupChecks(z.object(all), Object.values(groups));
  const object = check ? checked.superRefine((values, ctx) => check(values as EnvValues<G>, ctx), { when: () => true }) : checked;
  return object.transform((parsed) =>
    Object.fromEntries(Object.entries(groups).map(([key, concern]) => [key, configOf(concern, parsed as Record<string, unknown>)])),
  ) as unknown as z.ZodType<{ [K in keyof G]: ConcernConfig<G[K]> }, EnvSource>;
}

function renameKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [camelCaseEnvName(k), v]));
}

/**
 * Parse an environment with a schema, once, at start-up. Throws ConfigError listing every bad variable with the value
 * it got (secrets masked), so a misconfigured deployment fails before it takes a job. Issues a schema raises itself
 * (cross-variable rules) name their variable with `path: ['NAME']`.
 */
export function parseEnv<T>(schema: z.ZodType<T, EnvSource>, env: EnvSource): T {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((issue) => {
      const variable = String(issue.path[0] ?? '?');
      return { variable, shownValue: showEnvValue(variable, env[variable]), message: issue.message };
    }),
  );
}

const isBlank = (v: string | undefined): v is undefined => v === undefined || v.trim() === '';

/** A flag: true/1/yes/on or false/0/no/off, `def` when unset or blank (`undefined`: a default computed from other variables). */
export const boolVar = <D extends boolean | undefined>(def: D) =>
  z
    .string()
    .optional()
    .transform((v, ctx): boolean | D => {
      if (isBlank(v)) return def;
      const s = v.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return true;
      if (['false', '0', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: 'expected true or false' });
      return z.NEVER;
    });

/**
 * Longest duration a timer can wait: Node runs a setTimeout/setInterval longer than 2^31 − 1 ms (24.8 days) after 1 ms,
 * so a larger value meant as "rarely" or "patiently" fires at once. Settings a timer waits out stop here.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** Longest retention in days (100 years): a date further back than JavaScript dates reach would fail `crawl prune`. */
export const MAX_RETENTION_DAYS = 36_500;

/**
 * Longest pause, memory, TTL, window or grace setting: 100 years. Past it, `now + value` leaves the dates Postgres and
 * BullMQ's delay scores keep exactly, and the first write of such a pause failed.
 */
export const MAX_DURATION_MS = MAX_RETENTION_DAYS * 86_400_000;

/**
 * Why `v` is not an integer within [min, max], or null when it is. Without `max` the bound is
 * Number.MAX_SAFE_INTEGER: `1e99` or twenty nines parse as a JavaScript "integer" but hold no exact value, and a
 * limit such as FETCH_MAX_BYTES=1e99 would silently mean no limit.
 */
function intIssue(n: number, min: number, max: number | undefined): string | null {
  const upper = max ?? Number.MAX_SAFE_INTEGER;
  if (Number.isSafeInteger(n) && n >= min && n <= upper) return null;
  return max === undefined && !(Number.isInteger(n) && n > upper) ? `expected an integer >= ${min}` : `expected an integer from ${min} to ${upper}`;
}

/** An integer within [min, max] (max: Number.MAX_SAFE_INTEGER when not given), `def` when unset or blank. */
export const intVar = (def: number, min = 0, max?: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (isBlank(v)) return def;
      const n = Number(v.trim());
      const issue = intIssue(n, min, max);
      if (issue) {
        ctx.addIssue({ code: 'custom', message: issue });
        return z.NEVER;
      }
      return n;
    });

/** An integer within [min, max] (max: Number.MAX_SAFE_INTEGER when not given), `undefined` when unset or blank: for a default computed from other variables (see EnvGroup). */
export const optionalIntVar = (min = 0, max?: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx): number | undefined => {
      if (isBlank(v)) return undefined;
      const n = Number(v.trim());
      const issue = intIssue(n, min, max);
      if (issue) {
        ctx.addIssue({ code: 'custom', message: issue });
        return z.NEVER;
      }
      return n;
    });

/** A fraction in [0, 1], `def` when unset or blank. */
export const fractionVar = (def: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (isBlank(v)) return def;
      const n = Number(v.trim());
      if (!Number.isFinite(n) || n < 0 || n > 1) {
        ctx.addIssue({ code: 'custom', message: 'expected a number between 0 and 1' });
        return z.NEVER;
      }
      return n;
    });

/** A URL with one of `protocols` (`'postgresql:'`, with the colon). */
export const urlVar = (protocols: string[]) =>
  z.string().refine((v) => {
    try {
      return protocols.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, `expected a ${protocols.join(' or ')} URL`);

/**
 * A value read by a parser that throws on bad input (lists like `a=1,b=2`): the parser sees '' when the variable is
 * unset, and its error message becomes the issue's.
 */
export const parsedVar = <T>(parse: (value: string) => T) =>
  z
    .string()
    .optional()
    .transform((v, ctx): T => {
      try {
        return parse(v ?? '');
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A pino log level. */
export const logLevelVar = (def: (typeof LOG_LEVELS)[number]) => z.enum(LOG_LEVELS).default(def);

/** Postgres connection string (the only store of truth). */
export const databaseUrlVar = () => urlVar(['postgresql:', 'postgres:']);

/**
 * Redis connection string: `redis://`, `rediss://` (TLS), or `unix:///path/to/redis.sock` for a Redis on the same
 * machine (ioredis reads `?db=N` and other options from its query string).
 */
export const redisUrlVar = () => urlVar(['redis:', 'rediss:', 'unix:']);

/** A Redis key prefix for queues: non-empty, no ':' (braces make it a Cluster hash tag). */
export const queuePrefixVar = (def: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      // Blank is the default, as for every variable here: `QUEUE_PREFIX: ${QUEUE_PREFIX:-}` in a compose file.
      if (isBlank(v)) return def;
      const prefix = v.trim();
      if (prefix.includes(':')) {
        ctx.addIssue({ code: 'custom', message: 'must be non-empty without ":"' });
        return z.NEVER;
      }
      return prefix;
    });

/**
 * Postgres connections a crawler process keeps open. Every connection is its own Postgres backend: it loads its own
 * catalog caches and plans each prepared statement on its own (five custom plans before a generic one), and the
 * backends compete for the same cores. Measured on the many-domains bench (50 hosts, 6,000 pages, private Postgres,
 * 2 rounds): Postgres 1.84–1.93 ms/page with 10 connections (pg's default), 1.56–1.58 with 4, 1.48–1.49 with 2; pages/s
 * 321–323, 350–353, 350–358. Four leave room for a slow read beside the two outcome writes a process has in flight,
 * and keep a fleet of 22 worker processes and an API within Postgres' default of 100 connections.
 */
export const DEFAULT_DATABASE_POOL_SIZE = 4;

/** The database concern: every process that touches Postgres reads it the same way. */
export const DATABASE_ENV = {
  /** Postgres connection string. */
  DATABASE_URL: databaseUrlVar(),
  /** Postgres connections this process keeps at most (see DEFAULT_DATABASE_POOL_SIZE). @defaultValue 4 */
  DATABASE_POOL_SIZE: intVar(DEFAULT_DATABASE_POOL_SIZE, 1, 1_000),
};
