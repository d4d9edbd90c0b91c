import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { silentLogger, type Logger, type PipelineMetrics } from '@crawler/core';
import { ANALYSIS_WORKER_MARK, type AnalysisReply, type AnalysisRequest, type ResponseAnalysis } from './analysis-protocol.js';
import { analysedByteCount, analyzeSnapshot, type AnalysisInput } from './response-analysis.js';

/** Where the fetch worker has its responses validated and their heuristics taken. */
export interface ResponseAnalyzer {
  analyze(snap: AnalysisInput): Promise<ResponseAnalysis>;
  /** Get ready for the first response (threads started). */
  warm?(): void;
  close(): Promise<void>;
}

/** Analysis on the calling thread (ANALYSIS_THREADS=0, and the pool's fallback). */
export const inProcessAnalyzer: ResponseAnalyzer = {
  analyze: async (snap) => analyzeSnapshot(snap),
  close: async () => undefined,
};

/** Settle a request by analysing its response on the event loop. */
function analyseHere(snap: AnalysisInput, resolve: (a: ResponseAnalysis) => void, reject: (err: Error) => void): void {
  inProcessAnalyzer.analyze(snap).then(resolve, reject);
}

export interface AnalysisPoolOptions {
  threads: number;
  logger?: Logger;
  /** Told of every thread that died or was stopped for a response past its deadline. */
  metrics?: Pick<PipelineMetrics, 'analysisThreadEvent'>;
  /** Threads that may die (an uncaught error, out of memory) before the pool stops starting new ones. @defaultValue 5 */
  maxDeaths?: number;
  /** The thread's entry file. @defaultValue the build's analysis-worker.js */
  entry?: URL;
  /**
   * How long one response may take on a thread. Past it the response's analysis fails (its job fails, and in the end
   * its link, with that message) and the thread is stopped: a page that sends a detector into a runaway would
   * otherwise hold the thread, and every response queued behind it, for ever. @defaultValue 30000
   */
  timeoutMs?: number;
}

interface Pending {
  snap: AnalysisInput;
  resolve(a: ResponseAnalysis): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  /** In the order sent, which is the order the thread answers in: the first is the one it is working on. */
  pending: Map<number, Pending>;
  gone: boolean;
  /** The thread has loaded its modules (its ready message, or its first answer). */
  ready: boolean;
  /** The deadline of the response the thread is working on: armed once it is ready, re-armed at each answer. */
  timer: NodeJS.Timeout | null;
}

/**
 * A few worker threads that run the response analysis (validation: an HTML parse, the challenge, paywall and SPA
 * detectors; the post-fetch heuristics) off the event loop that runs the jobs. On the many-domains bench that work
 * was about a quarter of the event loop's CPU, and the event loop is what bounds one process's pages per second; the
 * threads run on the cores Postgres, Redis and the servers leave idle.
 *
 * Threads start on first use (or warm()) and never hold the process open. A request goes to the thread with the fewest in
 * flight. A thread that dies hands its requests to the event loop (the analysis is a pure function of the response,
 * so nothing is lost or done twice) and is replaced on the next request, up to `maxDeaths`, after which every
 * response is analysed on the event loop with one warning. After close(), too. A response that takes longer than
 * `timeoutMs` fails, and its thread is replaced: its other responses go to the new one. The deadline counts the
 * thread's work on that response only: it starts once the thread has loaded its modules and has answered the responses
 * sent before it, so neither a thread's start-up on a loaded machine nor a queue fails a response.
 */
export class AnalysisPool implements ResponseAnalyzer {
  readonly #size: number;
  readonly #logger: Logger;
  readonly #metrics: Pick<PipelineMetrics, 'analysisThreadEvent'> | undefined;
  readonly #maxDeaths: number;
  readonly #entry: URL;
  readonly #timeoutMs: number;
  readonly #threads: Thread[] = [];
  #nextId = 1;
  #deaths = 0;
  #closed = false;

  constructor(opts: AnalysisPoolOptions) {
    this.#size = Math.max(0, Math.floor(opts.threads));
    this.#logger = opts.logger ?? silentLogger;
    this.#metrics = opts.metrics;
    this.#maxDeaths = opts.maxDeaths ?? 5;
    this.#entry = opts.entry ?? defaultEntry();
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** Threads running now (tests, diagnostics). */
  get threads(): number {
    return this.#threads.length;
  }

  /**
   * Start the threads now rather than on the first response (a fetch worker's start-up): a thread loads the core's
   * modules, and its first response would wait for that.
   */
  warm(): void {
    while (!this.#closed && this.#deaths < this.#maxDeaths && this.#threads.length < this.#size) {
      if (!this.#start()) break;
    }
  }

  analyze(snap: AnalysisInput): Promise<ResponseAnalysis> {
    return new Promise<ResponseAnalysis>((resolve, reject) => this.#send(snap, resolve, reject));
  }

  /** Hand one response to the least busy thread, or analyse it here when the pool has none. */
  #send(snap: AnalysisInput, resolve: (a: ResponseAnalysis) => void, reject: (err: Error) => void): void {
    const thread = this.#pick();
    if (!thread) {
      analyseHere(snap, resolve, reject);
      return;
    }
    const id = this.#nextId++;
    thread.pending.set(id, { snap, resolve, reject });
    // Only the bytes the analysis reads go, as a copy moved to the thread (a clone would be two copies, whole); the
    // pending request keeps the response as it is, for the event loop should the thread die.
    const needed = typeof snap.body === 'string' ? snap.body.length : analysedByteCount(snap);
    const cut = typeof snap.body !== 'string' && needed < snap.body.byteLength ? snap.body.slice(0, needed) : null;
    const req: AnalysisRequest = { id, snap: cut ? { ...snap, body: cut } : snap };
    try {
      thread.worker.postMessage(req, cut ? [cut.buffer as ArrayBuffer] : []);
    } catch (err) {
      // Not cloneable (it is plain data: this would be a bug): analysed here instead.
      thread.pending.delete(id);
      this.#logger.warn({ err }, 'response analysis: request not sent to its thread; analysed on the event loop');
      analyseHere(snap, resolve, reject);
      return;
    }
    this.#arm(thread);
  }

  /** Start the deadline of the response a ready thread is working on (the first it has not answered), if not running. */
  #arm(thread: Thread): void {
    if (thread.gone || !thread.ready || thread.timer !== null) return;
    const head = thread.pending.keys().next();
    if (head.done) return;
    const id = head.value;
    thread.timer = setTimeout(() => this.#timedOut(thread, id), this.#timeoutMs);
    thread.timer.unref();
  }

  #disarm(thread: Thread): void {
    if (thread.timer !== null) clearTimeout(thread.timer);
    thread.timer = null;
  }

  /** A response that took too long: it fails, its thread is stopped, and the thread's other responses go to a new one. */
  #timedOut(thread: Thread, id: number): void {
    const p = thread.pending.get(id);
    if (!p || thread.gone) return;
    thread.timer = null;
    thread.pending.delete(id);
    const url = p.snap.url;
    this.#logger.warn({ url, timeoutMs: this.#timeoutMs }, 'response analysis took too long: the response fails and its thread is stopped');
    p.reject(new Error(`response analysis took longer than ${this.#timeoutMs} ms${url ? ` (${url})` : ''}`));
    this.#metrics?.analysisThreadEvent?.('timed_out');
    this.#retire(thread);
    void thread.worker.terminate().catch(() => undefined);
    const others = [...thread.pending.values()];
    thread.pending.clear();
    for (const o of others) this.#send(o.snap, o.resolve, o.reject);
  }

  /** Take a thread out of the pool (its exit event is then not a death). */
  #retire(thread: Thread): void {
    thread.gone = true;
    this.#disarm(thread);
    const i = this.#threads.indexOf(thread);
    if (i >= 0) this.#threads.splice(i, 1);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const threads = [...this.#threads];
    for (const t of threads) this.#retire(t);
    await Promise.all(threads.map(async (t) => {
      this.#drainHere(t);
      await t.worker.terminate().catch(() => undefined);
    }));
  }

  #pick(): Thread | null {
    if (this.#closed || this.#size === 0 || this.#deaths >= this.#maxDeaths) return null;
    if (this.#threads.length < this.#size) return this.#start();
    let best = this.#threads[0]!;
    for (const t of this.#threads) if (t.pending.size < best.pending.size) best = t;
    return best;
  }

  #start(): Thread | null {
    let worker: Worker;
    try {
      worker = new Worker(this.#entry, { workerData: { mark: ANALYSIS_WORKER_MARK } });
    } catch (err) {
      this.#died(null, err);
      return null;
    }
    worker.unref();
    const thread: Thread = { worker, pending: new Map(), gone: false, ready: false, timer: null };
    // A thread that never says it is ready (an entry without the message) is taken for ready after a minute, or after
    // the deadline if that is longer: its deadlines then run, so a runaway on it is still caught.
    const boot = setTimeout(() => this.#ready(thread), Math.max(this.#timeoutMs, 60_000));
    boot.unref();
    worker.on('message', (reply: AnalysisReply) => {
      clearTimeout(boot);
      if ('ready' in reply) {
        this.#ready(thread);
        return;
      }
      thread.ready = true;
      const p = thread.pending.get(reply.id);
      if (!p) return;
      thread.pending.delete(reply.id);
      this.#disarm(thread);
      if ('result' in reply) p.resolve(reply.result);
      else p.reject(new Error(reply.error));
      this.#arm(thread);
    });
    worker.on('error', (err) => this.#died(thread, err));
    worker.on('exit', (code) => this.#died(thread, new Error(`analysis thread exited with code ${code}`)));
    this.#threads.push(thread);
    return thread;
  }

  #ready(thread: Thread): void {
    thread.ready = true;
    this.#arm(thread);
  }

  #died(thread: Thread | null, err: unknown): void {
    if (thread) {
      if (thread.gone) return;
      this.#retire(thread);
      this.#drainHere(thread);
    }
    this.#deaths++;
    this.#metrics?.analysisThreadEvent?.('died');
    if (this.#deaths >= this.#maxDeaths) this.#logger.warn({ err, deaths: this.#deaths }, 'response analysis threads keep dying: analysing on the event loop from now on');
    else this.#logger.warn({ err }, 'response analysis thread died: its responses are analysed on the event loop, a new thread starts on the next one');
  }

  /** A thread's requests still in flight, analysed on the event loop. */
  #drainHere(thread: Thread): void {
    const pending = [...thread.pending.values()];
    thread.pending.clear();
    for (const p of pending) analyseHere(p.snap, p.resolve, p.reject);
  }
}

/** The build's thread entry. Under vitest this module runs from src/ as TypeScript; the thread runs dist's JavaScript. */
function defaultEntry(): URL {
  const here = new URL('./analysis-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  return new URL('../../dist/fetch/analysis-worker.js', import.meta.url);
}
