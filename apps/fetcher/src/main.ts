#!/usr/bin/env node
/**
 * The fetch worker process: consumes the queues of the fetchers in FETCHERS (each with its concurrency), polite to
 * every domain as one fleet through Redis, robots.txt respected. Scale it by running more of them.
 */
import { createLogger } from '@crawler/telemetry';
import { exitOnSignals, parseWorkerEnv, startWorkerProcess } from '@crawler/worker-host';

const env = (() => {
  try {
    return parseWorkerEnv(process.env);
  } catch (err) {
    process.stderr.write(`fetcher: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
})();
const logger = createLogger({ name: 'fetcher', level: env.crawler.logLevel });
// Signals are handled from the first moment: a SIGTERM during start-up shuts down once the start completes.
const app = startWorkerProcess({ env, logger, workers: { router: false } }).catch((err: unknown) => {
  logger.error({ err }, 'start-up failed');
  process.exit(1);
});
exitOnSignals(async () => (await app).close(), logger, env.shutdownDrainTimeoutMs + 30_000);
