/**
 * A crawler worker process for crash tests: router and fetch workers from the environment, like `crawl run`.
 * Prints "ready" once its workers are started.
 */
import { loadConfig } from '../config/crawler-config.js';
import { startCrawler } from '../runtime/create-runtime.js';

const runtime = startCrawler(loadConfig(process.env));
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void runtime.close().then(() => process.exit(0));
});
