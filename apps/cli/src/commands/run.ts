import { parseArgs } from 'node:util';
import { canonicalFetcherName } from '@crawler/core';
import { onShutdownSignal, type CrawlerRuntime } from '@crawler/pipeline';
import { InterruptedError, UsageError, type Command } from '../command.js';
import { checkBrowserExecutable, cliLogger, configFrom, openRuntime } from '../crawler/cli-context.js';
import { startCliEvents } from '../crawler/cli-events.js';
import { cliEnv } from '../env.js';

const USAGE = 'usage: crawl run [--until-idle] [--no-router] [--fetchers a,b]';

/** Stop on SIGTERM/SIGINT: drain in-flight jobs, then close browsers, Redis and Postgres (runtime.close). */
export function closeOnSignals(runtime: CrawlerRuntime, onClosed: () => void, beforeClose: () => Promise<void> = async () => {}): () => void {
  return onShutdownSignal((signal) => {
    runtime.logger.info({ signal }, 'shutting down: draining in-flight jobs');
    void beforeClose()
      .then(() => runtime.close())
      .finally(onClosed);
  });
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, options: { 'until-idle': { type: 'boolean' }, 'no-router': { type: 'boolean' }, fetchers: { type: 'string' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    const config = configFrom(io);
    const logger = cliLogger(io, config.logLevel);
    // Aliases mean their fetcher here as in FETCHERS (`direct_access` is `simple_http`).
    const fetchers = parsed.values.fetchers?.split(',').map((s) => s.trim()).filter(Boolean).map(canonicalFetcherName);
    const unknown = fetchers?.filter((f) => !config.fetchers.some((c) => c.name === f));
    if (unknown && unknown.length > 0) throw new UsageError(`--fetchers names fetchers not in FETCHERS: ${unknown.join(', ')}`);
    checkBrowserExecutable(config, fetchers);
    // /metrics, /healthz and /readyz as the router and fetcher apps serve them (METRICS_PORT, METRICS_HOST,
    // METRICS_TOKEN). Loaded here, not at the top: `crawl crawl` imports this module and serves no metrics.
    const host = await import('@crawler/worker-host');
    const metricsSettings = cliEnv(host.METRICS_ENV_SCHEMA, io.env);
    const metrics = host.createWorkerMetrics();
    const router = !parsed.values['no-router'];
    const workers = { router, fetchers };
    let shuttingDown = false;
    let server: Awaited<ReturnType<typeof host.serveWorkerMetrics>> = null;
    // Served before the wait for Redis, as the apps serve it: /healthz answers (the process is alive) and /readyz
    // says which dependency is missing while Redis is down, instead of a probe seeing no port at all.
    const serve = async (rt: CrawlerRuntime) => {
      try {
        server = await host.serveWorkerMetrics({ runtime: rt, metrics, workers, settings: metricsSettings, logger, shuttingDown: () => shuttingDown });
      } catch (err) {
        throw err instanceof host.MetricsPortInUseError ? new UsageError(err.message) : err;
      }
      return server;
    };
    let runtime: CrawlerRuntime;
    try {
      runtime = await openRuntime(config, { logger, metrics }, { beforeRedis: serve });
    } catch (err) {
      // Stopped while waiting for Redis: without --until-idle a signal is how this command ends, work or none.
      if (err instanceof InterruptedError && !parsed.values['until-idle']) {
        logger.info({ reason: err.message }, 'stopped before starting');
        return 0;
      }
      throw err;
    }
    runtime.startWorkers(workers);
    const events = startCliEvents(runtime, config, logger, router);
    const beforeClose = async () => {
      shuttingDown = true;
      await events.stop();
    };
    // Last, so a scrape during the drain still answers.
    const closeMetrics = () => server?.close().catch((err: unknown) => logger.warn({ err }, 'closing /metrics failed'));
    logger.info({ fetchers: fetchers ?? config.fetchers.map((f) => f.name), learning: config.learningModeEnabled }, 'crawler running');
    if (parsed.values['until-idle']) {
      const release = closeOnSignals(runtime, () => undefined, beforeClose);
      try {
        await runtime.waitUntilIdle();
      } finally {
        release();
        shuttingDown = true;
        // The last pages' events go out before the process ends (after a signal the dispatcher is already stopped).
        if (!runtime.closed) await events.finish();
        await runtime.close();
        await closeMetrics();
      }
      return 0;
    }
    await new Promise<void>((resolve) => closeOnSignals(runtime, resolve, beforeClose));
    await closeMetrics();
    return 0;
  },
};

export default command;
