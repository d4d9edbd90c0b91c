import type { Heuristic, ValidationResult } from '@crawler/core';
import type { EncodedBody } from '@crawler/db/codec';
import type { AnalysisInput } from './response-analysis.js';

/** The analysis of one response: what the fetch worker decides on and logs with the attempt. */
export interface ResponseAnalysis {
  validation: ValidationResult;
  heuristics: Heuristic[];
  /**
   * The body compressed and hashed for storage, when it arrived as bytes and looks like a page that will be stored
   * (a 2xx that is not a wall): compressing on the analysis thread keeps ~0.15 ms per page off the event loop.
   */
  encoded?: EncodedBody;
}

/** The pool's workerData: a worker thread that was not started by the pool does nothing. */
export const ANALYSIS_WORKER_MARK = 'crawler-response-analysis';

export interface AnalysisRequest {
  id: number;
  snap: AnalysisInput;
}

/** A thread's answer to one request, or its word that it has loaded its modules (its deadlines start then). */
export type AnalysisReply = { id: number; result: ResponseAnalysis } | { id: number; error: string } | { ready: true };
