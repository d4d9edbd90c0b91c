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
}

const ApiSchema = z.object({
  PORT: intVar(3000, 0, 65_535),
  HOST: z.string().trim().min(1).default('127.0.0.1'),
  API_MAX_BATCH_SIZE: intVar(1_000, 1, 100_000),
});

/**
 * Parse the API's environment once. In production (NODE_ENV=production) Bull Board credentials are required:
 * there is no default password to forget to change. Every problem is reported at once, naming the variable.
 */
export function parseApiEnv(env: Record<string, string | undefined>): ApiEnv {
  const problems: string[] = [];
  const describe = (name: string, message: string) => {
    const value = name.includes('PASSWORD') && env[name] !== undefined ? '(hidden)' : env[name] === undefined ? '(unset)' : JSON.stringify(env[name]);
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
  if (production && !user) describe('BULL_BOARD_USER', 'required when NODE_ENV=production');
  if (production && !password) describe('BULL_BOARD_PASSWORD', 'required when NODE_ENV=production (there is no default password)');
  if (password && password.length < 8) describe('BULL_BOARD_PASSWORD', 'must be at least 8 characters');
  const bullBoard: BullBoardCredentials | null = password ? { user: user ?? 'admin', password } : null;
  if (problems.length > 0 || !crawler || !own.success) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  return { crawler, port: own.data.PORT, host: own.data.HOST, production, bullBoard, maxBatchSize: own.data.API_MAX_BATCH_SIZE };
}
