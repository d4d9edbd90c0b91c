import { z } from 'zod';
import { ConfigError, intVar, loadConfig, type CrawlerConfig } from '@crawler/pipeline';

/** Basic-auth credentials of Bull Board. */
export interface BullBoardCredentials {
  user: string;
  password: string;
}

/** The API's configuration: the crawler's (queues, database) plus the HTTP server's. */
export interface ApiEnv {
  crawler: CrawlerConfig;
  /** @defaultValue 3000 */
  port: number;
  /** Interface to listen on; containers need 0.0.0.0. @defaultValue '127.0.0.1' */
  host: string;
  production: boolean;
  /** Bull Board's credentials; null (development without BULL_BOARD_PASSWORD) leaves the board off. */
  bullBoard: BullBoardCredentials | null;
  /** Most links one POST /links may carry. @defaultValue 1000 */
  maxBatchSize: number;
  /**
   * Keys accepted as `Authorization: Bearer <key>` on every route but /healthz (Bull Board has its own basic auth);
   * null (development without API_KEYS) leaves the API open. @defaultValue null
   */
  apiKeys: string[] | null;
}

/** Shortest API key accepted: a key must not be guessable in a lifetime of requests. */
export const MIN_API_KEY_LENGTH = 24;

const ApiSchema = z.object({
  PORT: intVar(3000, 0, 65_535),
  HOST: z.string().trim().min(1).default('127.0.0.1'),
  API_MAX_BATCH_SIZE: intVar(1_000, 1, 100_000),
});

/**
 * Parse the API's environment once. In production (NODE_ENV=production) API keys and Bull Board credentials are
 * required: there is no open API and no default password to forget to change. Every problem is reported at once, naming the variable.
 */
export function parseApiEnv(env: Record<string, string | undefined>): ApiEnv {
  const problems: string[] = [];
  const describe = (name: string, message: string) => {
    const value = (name.includes('PASSWORD') || name === 'API_KEYS') && env[name] !== undefined ? '(hidden)' : env[name] === undefined ? '(unset)' : JSON.stringify(env[name]);
    problems.push(`${name}=${value}: ${message}`);
  };
  let crawler: CrawlerConfig | undefined;
  try {
    crawler = loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(err.message.replace(/^invalid configuration: /, ''));
  }
  const own = ApiSchema.safeParse(env);
  if (!own.success) for (const issue of own.error.issues) describe(String(issue.path[0] ?? '?'), issue.message);
  const production = env.NODE_ENV === 'production';
  const user = env.BULL_BOARD_USER || undefined;
  const password = env.BULL_BOARD_PASSWORD || undefined;
  const apiKeys = [...new Set((env.API_KEYS ?? '').split(',').map((k) => k.trim()).filter((k) => k !== ''))];
  if (production && apiKeys.length === 0) describe('API_KEYS', 'required when NODE_ENV=production (comma-separated bearer keys)');
  if (apiKeys.some((k) => k.length < MIN_API_KEY_LENGTH || /\s/.test(k))) {
    describe('API_KEYS', `every key must be at least ${MIN_API_KEY_LENGTH} characters without spaces (e.g. openssl rand -hex 24)`);
  }
  if (production && !user) describe('BULL_BOARD_USER', 'required when NODE_ENV=production');
  if (production && !password) describe('BULL_BOARD_PASSWORD', 'required when NODE_ENV=production (there is no default password)');
  if (password && password.length < 8) describe('BULL_BOARD_PASSWORD', 'must be at least 8 characters');
  const bullBoard: BullBoardCredentials | null = password ? { user: user ?? 'admin', password } : null;
  if (problems.length > 0 || !crawler || !own.success) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  return {
    crawler,
    port: own.data.PORT,
    host: own.data.HOST,
    production,
    bullBoard,
    maxBatchSize: own.data.API_MAX_BATCH_SIZE,
    apiKeys: apiKeys.length > 0 ? apiKeys : null,
  };
}
