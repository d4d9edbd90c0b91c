import {
  classifyProbe,
  errorTypeOf,
  extractResponseHeuristics,
  validateResponse,
  type ResponseSnapshot,
} from '@crawler/core';
import type { FetchResult } from '@crawler/fetchers';
import type { ResponseAnalysis } from './analysis-protocol.js';

/** The core's view of a fetched response. Text when the fetcher decoded it, bytes otherwise. */
export function snapshotOf(res: Pick<FetchResult, 'status' | 'headers' | 'body' | 'text' | 'finalUrl'>): ResponseSnapshot {
  return { status: res.status, headers: res.headers, body: res.text ?? res.body, url: res.finalUrl };
}

/** Validation and post-fetch heuristics of a response, in one place so both workers read responses alike. */
export function analyzeResponse(res: Pick<FetchResult, 'status' | 'headers' | 'body' | 'text' | 'finalUrl'>): ResponseAnalysis {
  return analyzeSnapshot(snapshotOf(res));
}

/** analyzeResponse on the core's view of the response (what the analysis pool's threads receive). */
export function analyzeSnapshot(snap: ResponseSnapshot): ResponseAnalysis {
  const validation = validateResponse(snap);
  return { validation, heuristics: extractResponseHeuristics(snap, validation) };
}

/** The probe's verdict: which fetcher, and whether its body can stand in for the fetch. */
export interface ProbeVerdict {
  fetcher: string;
  reuse: boolean;
  reason: string;
}

export function judgeProbe(outcome: { response: FetchResult } | { error: unknown }): ProbeVerdict {
  const verdict =
    'response' in outcome
      ? classifyProbe({ response: snapshotOf(outcome.response) })
      : classifyProbe({ error: { errorType: errorTypeOf(outcome.error), message: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) } });
  return { fetcher: verdict.fetcher, reuse: verdict.reuse, reason: verdict.reason };
}
