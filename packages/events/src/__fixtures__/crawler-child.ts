/** A crawler process for the fault test: router and fetch workers from the environment, as `crawl run` starts them. */
import { loadConfig, startCrawler } from '@crawler/pipeline';

const runtime = startCrawler(loadConfig(process.env));
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void runtime.close().then(() => process.exit(0));
});
