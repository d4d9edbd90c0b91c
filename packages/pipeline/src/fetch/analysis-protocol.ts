import type { Heuristic, ValidationResult } from '@crawler/core';
import type { AnalysisInput } from './response-analysis.js';

/** The analysis of one response: what the fetch worker decides on and logs with the attempt. */
export interface ResponseAnalysis {
  validation: ValidationResult;
  heuristics: Heuristic[];
  /** sha256 hex of the page's visible text (see textFingerprint), stored with the page; null for non-HTML. */
  textSha256: string | null;
}

/** The pool's workerData: a worker thread that was not started by the pool does nothing. */
export const ANALYSIS_WORKER_MARK = 'crawler-response-analysis';

export interface AnalysisRequest {
  id: number;
  snap: AnalysisInput;
}

/** A thread's answer to one request, or its word that it has loaded its modules (its deadlines start then). */
export type AnalysisReply = { id: number; result: ResponseAnalysis } | { id: number; error: string } | { ready: true };
