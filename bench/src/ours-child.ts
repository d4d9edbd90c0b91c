/**
 * Child-process entry for one role of our crawler, built from the pipeline's exported runtime exactly as the apps
 * build it: `router` (route worker only), `fetcher` (fetch workers only) or `producer` (enqueues, runs no worker).
 * The role comes from BENCH_ROLE; everything else from the environment `loadConfig` reads.
 */
import { createRuntime, loadConfig, type CrawlerRuntime } from '@crawler/pipeline';
import { createLogger, createPipelineMetrics } from '@crawler/telemetry';
import { serveRpc } from './child-rpc.js';
import { benchEnv } from './env.js';

const role = benchEnv().benchRole;
let runtime: CrawlerRuntime | null = null;

function current(): CrawlerRuntime {
  if (!runtime) throw new Error('runtime not started');
  return runtime;
}

serveRpc(
  {
    start: () => {
      const config = loadConfig(process.env);
      const logger = createLogger({ name: `bench-${role}`, level: config.logLevel, pretty: false });
      // Metrics on, as in production: their cost is part of what we measure.
      runtime = createRuntime(config, { logger, metrics: createPipelineMetrics() });
      if (role === 'router') runtime.startWorkers({ router: true, fetchers: [] });
      else if (role === 'fetcher') runtime.startWorkers({ router: false });
      else if (role !== 'producer') throw new Error(`unknown BENCH_ROLE ${JSON.stringify(role)}`);
      return { pid: process.pid };
    },
    enqueue: async (urls: string[]) => {
      const result = await current().enqueue(urls);
      return { accepted: result.accepted.length, rejected: result.rejected.length };
    },
  },
  async () => {
    await runtime?.close({ drainTimeoutMs: 10_000 });
  },
);
