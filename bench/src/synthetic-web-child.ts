/** Child-process entry: runs the synthetic web so it never shares an event loop with the crawler it serves. */
import { serveRpc } from './child-rpc.js';
import { startSyntheticWeb, type SyntheticWeb, type SyntheticWebOptions } from './synthetic-web.js';

let web: SyntheticWeb | null = null;

serveRpc(
  {
    start: async (options: SyntheticWebOptions) => {
      await web?.close();
      web = await startSyntheticWeb(options);
      return { origins: web.origins };
    },
    stats: () => web?.stats() ?? null,
    reset: () => web?.resetCounts(),
    cpu: () => process.cpuUsage(),
    close: async () => {
      await web?.close();
      web = null;
    },
  },
  async () => {
    await web?.close();
  },
);
