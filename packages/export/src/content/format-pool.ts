import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { formatAsMarkdown, formatAsText, UnsupportedFormatError, type FormattedContent, type PageForFormat } from './format-content.js';

/**
 * Bodies up to this size are converted on the caller's thread (a few milliseconds); larger ones on a thread of their
 * own. A 6 MB page takes 3.5–4.9 s to read as a browser would: on the API's event loop that held every request,
 * `/healthz` included, for as long.
 */
export const INLINE_FORMAT_BYTES = 256 * 1024;

interface Pending {
  resolve: (out: FormattedContent) => void;
  reject: (err: Error) => void;
}

interface WorkerAnswer {
  id: number;
  out?: FormattedContent;
  error?: { message: string; unsupported: { format: 'text' | 'markdown'; contentType: string | null } | null };
}

/**
 * One conversion thread per process, started on first use and kept while it has work; a process with none pending
 * can exit (the thread is unreferenced). Conversions queue on it in order: a burst of large pages waits its turn
 * instead of taking every core. A thread that dies fails what it held and the next conversion starts a new one.
 */
class FormatThread {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #next = 0;

  run(format: 'text' | 'markdown', page: PageForFormat): Promise<FormattedContent> {
    const worker = (this.#worker ??= this.#start());
    const id = ++this.#next;
    if (this.#pending.size === 0) worker.ref();
    return new Promise<FormattedContent>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, format, page });
    });
  }

  #start(): Worker {
    const worker = new Worker(workerEntry());
    worker.unref();
    worker.on('message', ({ id, out, error }: WorkerAnswer) => {
      const job = this.#pending.get(id);
      if (!job) return;
      this.#pending.delete(id);
      if (this.#pending.size === 0) worker.unref();
      if (out) job.resolve(out);
      else if (error?.unsupported) job.reject(new UnsupportedFormatError(error.unsupported.format, error.unsupported.contentType));
      else job.reject(new Error(error?.message ?? 'the conversion thread gave no answer'));
    });
    const fail = (err: Error) => {
      if (this.#worker === worker) this.#worker = undefined;
      const jobs = [...this.#pending.values()];
      this.#pending.clear();
      for (const job of jobs) job.reject(err);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the conversion thread exited (code ${code})`)));
    return worker;
  }
}

let thread: FormatThread | undefined;

/** `page` as text or Markdown: on this thread when it is small, on the conversion thread when it is large. */
export function formatPage(format: 'text' | 'markdown', page: PageForFormat): Promise<FormattedContent> {
  if (page.body.byteLength <= INLINE_FORMAT_BYTES) {
    try {
      return Promise.resolve(format === 'text' ? formatAsText(page) : formatAsMarkdown(page));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
  return (thread ??= new FormatThread()).run(format, page);
}

/** The build's thread entry, beside this module (in a bundle too); under vitest this module runs from src/. */
function workerEntry(): URL {
  const here = new URL('./format-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  return new URL('../../dist/content/format-worker.js', import.meta.url);
}
