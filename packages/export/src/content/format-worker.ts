/**
 * The thread that turns large stored pages into text or Markdown (format-pool.ts): parsing a page of megabytes takes
 * seconds, which on the API's own thread would hold every other request, health checks included.
 */
import { parentPort } from 'node:worker_threads';
import { formatAsMarkdown, formatAsText, UnsupportedFormatError, type PageForFormat } from './format-content.js';

export interface FormatJob {
  id: number;
  format: 'text' | 'markdown';
  page: PageForFormat;
}

parentPort?.on('message', ({ id, format, page }: FormatJob) => {
  try {
    parentPort!.postMessage({ id, out: format === 'text' ? formatAsText(page) : formatAsMarkdown(page) });
  } catch (err) {
    const unsupported = err instanceof UnsupportedFormatError ? { format: err.format, contentType: err.contentType } : null;
    parentPort!.postMessage({ id, error: { message: (err as Error).message, unsupported } });
  }
});
