#!/usr/bin/env node
/**
 * The router worker process: consumes the route queue and sends each link to a fetcher's queue (learned choice,
 * probe, or the legacy table). FETCHERS lists the fetchers the fleet runs, so it never routes to one nobody serves.
 */
import { createLogger } from '@crawler/telemetry';
import { exitOnSignals, parseWorkerEnv, startWorkerProcess } from '@crawler/worker-host';

const env = (() => {
  try {
    return parseWorkerEnv(process.env);
  } catch (err) {
    process.stderr.write(`router: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
})();
const logger = createLogger({ name: 'router', level: env.crawler.logLevel });
// Signals are handled from the first moment: a SIGTERM during start-up shuts down once the start completes.
const app = startWorkerProcess({ env, logger, workers: { router: true, fetchers: [] } }).catch((err: unknown) => {
  logger.error({ err }, 'start-up failed');
  process.exit(1);
});
exitOnSignals(async () => (await app).close(), logger, env.shutdownDrainTimeoutMs + 30_000);
