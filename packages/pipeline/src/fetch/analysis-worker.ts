// A worker thread of the response analysis pool (analysis-pool.ts): validation and post-fetch heuristics of one
// response per message, the same function the fetch worker runs in-process without a pool. Never imported by the
// main thread: it is the pool's entry file only.
import { parentPort, workerData } from 'node:worker_threads';
import { analyzeSnapshot } from './response-analysis.js';
import { ANALYSIS_WORKER_MARK, type AnalysisReply, type AnalysisRequest } from './analysis-protocol.js';

if (parentPort && (workerData as { mark?: unknown } | null)?.mark === ANALYSIS_WORKER_MARK) {
  const port = parentPort;
  port.on('message', (req: AnalysisRequest) => {
    let reply: AnalysisReply;
    try {
      reply = { id: req.id, result: analyzeSnapshot(req.snap) };
    } catch (err) {
      reply = { id: req.id, error: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(reply);
  });
  // The modules above are loaded: the pool's deadlines start from here, not from the thread's start-up.
  port.postMessage({ ready: true } satisfies AnalysisReply);
}
