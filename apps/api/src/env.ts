import { z } from 'zod';
import { CRAWLER } from '@crawler/pipeline';
import { MAX_TIMER_MS, boolVar, composeEnv, intVar, parseEnv, type EnvSource } from '@crawler/core';

/** Basic-auth credentials of Bull Board, and whether it may change jobs. */
export interface BullBoardCredentials {
  user: string;
  password: string;
  /**
   * Refuse the board's actions (clean, retry, promote, delete, pause, add…): a deleted delayed job undoes a backoff
   * and a cleaned queue drops work until the reconciler rebuilds it from Postgres. @defaultValue true
   */
  readOnly?: boolean;
}

/** How long the API waits on a slow client before it closes the connection (API_*_TIMEOUT_MS). */
export interface ApiTimeouts {
  /** Time to receive a request's headers. @defaultValue 10000 */
  headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body; at least headersTimeoutMs. @defaultValue 30000 */
  requestTimeoutMs: number;
  /** Time a connection may stay silent, no byte either way. @defaultValue 60000 */
  idleTimeoutMs: number;
}

/** Shortest API key accepted: a key must not be guessable in a lifetime of requests. */
export const MIN_API_KEY_LENGTH = 24;

/**
 * The API's own variables, beside the crawler's (CRAWLER_ENV). To add one, add it here with a TSDoc line: it appears
 * as `env.<camelCase of NAME>`; secrets are masked in errors by name (core `config/env.ts`).
 */
export const API_ENV = {
  /** @defaultValue 3000 */
  PORT: intVar(3000, 0, 65_535),
  /** Interface to listen on; containers need 0.0.0.0. @defaultValue '127.0.0.1' */
  HOST: z.string().trim().min(1).default('127.0.0.1'),
  /** Most links one POST /links may carry. @defaultValue 1000 */
  API_MAX_BATCH_SIZE: intVar(1_000, 1, 100_000),
  /**
   * How long a client may take to send a request's headers, from its first byte (or from connecting); past it the API
   * answers 408 and closes the connection, so headers dripped a byte at a time (slow-loris) hold no socket. @defaultValue 10000
   */
  API_HEADERS_TIMEOUT_MS: intVar(10_000, 1, MAX_TIMER_MS),
  /**
   * How long a client may take to send a whole request, headers and body; past it 408 and the connection is closed, so a
   * body that never ends holds no socket. The handler's own work is not counted. @defaultValue 30000
   */
  API_REQUEST_TIMEOUT_MS: intVar(30_000, 1, MAX_TIMER_MS),
  /** How long a connection may stay silent (no byte either way) before it is closed. @defaultValue 60000 */
  API_IDLE_TIMEOUT_MS: intVar(60_000, 1, MAX_TIMER_MS),
  /** `production` requires Bull Board credentials. */
  NODE_ENV: z.string().optional(),
  /**
   * Keys accepted as `Authorization: Bearer <key>` on every route but /healthz and /readyz (Bull Board has its own basic auth),
   * comma-separated; null (development without API_KEYS) leaves the API open. @defaultValue null
   */
  API_KEYS: z
    .string()
    .optional()
    .transform((v) => [...new Set((v ?? '').split(',').map((k) => k.trim()).filter((k) => k !== ''))])
    .refine((keys) => keys.every((k) => k.length >= MIN_API_KEY_LENGTH && !/\s/.test(k)), {
      message: `every key must be at least ${MIN_API_KEY_LENGTH} characters without spaces (e.g. openssl rand -hex 24)`,
    })
    .transform((keys) => (keys.length > 0 ? keys : null)),
  /** Bull Board's user. @defaultValue 'admin' (outside production) */
  BULL_BOARD_USER: z.string().optional(),
  /** Bull Board's password; unset (outside production) leaves the board off. */
  BULL_BOARD_PASSWORD: z
    .string()
    .optional()
    .refine((v) => !v || v.length >= 8, 'must be at least 8 characters'),
  /**
   * Bull Board shows queues and jobs but refuses every action on them (405); `false` lets whoever has the board's
   * password clean, retry, promote, delete or add jobs and pause queues. @defaultValue true
   */
  BULL_BOARD_READ_ONLY: boolVar(true),
};

const ApiEnvSchema = composeEnv({ crawler: CRAWLER, api: API_ENV }, (values, ctx) => {
  // Node refuses a server whose headers may take longer than the whole request.
  const { API_HEADERS_TIMEOUT_MS: headers, API_REQUEST_TIMEOUT_MS: request } = values;
  if (typeof headers === 'number' && typeof request === 'number' && headers > request) {
    ctx.addIssue({ code: 'custom', path: ['API_HEADERS_TIMEOUT_MS'], message: `must be at most API_REQUEST_TIMEOUT_MS (${request})` });
  }
  // In production there is no open API and no default password to forget to change.
  if (values.NODE_ENV !== 'production') return;
  if (values.API_KEYS === null) ctx.addIssue({ code: 'custom', path: ['API_KEYS'], message: 'required when NODE_ENV=production (comma-separated bearer keys)' });
  if (!values.BULL_BOARD_USER) ctx.addIssue({ code: 'custom', path: ['BULL_BOARD_USER'], message: 'required when NODE_ENV=production' });
  if (!values.BULL_BOARD_PASSWORD) ctx.addIssue({ code: 'custom', path: ['BULL_BOARD_PASSWORD'], message: 'required when NODE_ENV=production (there is no default password)' });
})
  // The raw Bull Board and NODE_ENV values become `bullBoard` and `production`; every other variable passes as parsed.
  .transform(({ crawler, api: { nodeEnv, bullBoardUser, bullBoardPassword, bullBoardReadOnly, apiHeadersTimeoutMs, apiRequestTimeoutMs, apiIdleTimeoutMs, ...own } }) => ({
    crawler,
    ...own,
    /** The HTTP server's limits on slow clients (createServer's `timeouts`). */
    timeouts: { headersTimeoutMs: apiHeadersTimeoutMs, requestTimeoutMs: apiRequestTimeoutMs, idleTimeoutMs: apiIdleTimeoutMs } satisfies ApiTimeouts,
    production: nodeEnv === 'production',
    /** Bull Board's credentials; null (development without BULL_BOARD_PASSWORD) leaves the board off. */
    bullBoard: bullBoardPassword ? ({ user: bullBoardUser || 'admin', password: bullBoardPassword, readOnly: bullBoardReadOnly } satisfies BullBoardCredentials) : null,
  }));

/** The API's configuration: the crawler's (queues, database) plus the HTTP server's. */
export type ApiEnv = z.output<typeof ApiEnvSchema>;

/**
 * Parse the API's environment once. In production (NODE_ENV=production) API keys and Bull Board credentials are
 * required: there is no open API and no default password to forget to change. Every problem is reported at once,
 * naming the variable.
 */
export function parseApiEnv(env: EnvSource): ApiEnv {
  return parseEnv(ApiEnvSchema, env);
}
