/** Child-process entry: runs one reference crawl and reports what it measured. */
import { serveRpc } from './child-rpc.js';
import type { CrawlMeasurement, CrawlSpec } from './reference-result.js';
import { measureReference, type ReferenceName } from './reference-run.js';

serveRpc({
  crawl: ({ name, spec }: { name: ReferenceName; spec: CrawlSpec }): Promise<CrawlMeasurement> => measureReference(name, spec),
});
