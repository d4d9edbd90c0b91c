import { createHash } from 'node:crypto';
import {
  classifyProbe,
  errorTypeOf,
  extractResponseHeuristics,
  MAX_ANALYSED_BYTES,
  validateResponseDetailed,
  type PageFeatures,
  type ResponseSnapshot,
} from '@crawler/core';
import type { FetchResult } from '@crawler/fetchers';
import { decodeText } from '@crawler/fetchers/decode';
import type { ResponseAnalysis } from './analysis-protocol.js';

/**
 * The core's view of a fetched response, and the charset to decode its bytes with when the fetcher decodes bytes
 * ({@link FetchResult.charset}): then the bytes travel and the analysis decodes them, on its thread, as `text` reads.
 */
export interface AnalysisInput extends ResponseSnapshot {
  charset?: string;
}

/** The core's view of a fetched response. Text when the fetcher decoded it, bytes otherwise. */
export function snapshotOf(res: Pick<FetchResult, 'status' | 'headers' | 'body' | 'text' | 'finalUrl'>): ResponseSnapshot {
  return { status: res.status, headers: res.headers, body: res.text ?? res.body, url: res.finalUrl };
}

/** What the analysis gets of a response: its bytes and their charset where the fetcher decodes bytes, else {@link snapshotOf}. */
export function analysisInputOf(res: Pick<FetchResult, 'status' | 'headers' | 'body' | 'text' | 'finalUrl' | 'charset'>): AnalysisInput {
  if (res.charset !== undefined) return { status: res.status, headers: res.headers, body: res.body, url: res.finalUrl, charset: res.charset };
  return snapshotOf(res);
}

/** Validation and post-fetch heuristics of a response, in one place so both workers read responses alike. */
export function analyzeResponse(res: Pick<FetchResult, 'status' | 'headers' | 'body' | 'text' | 'finalUrl'>): ResponseAnalysis {
  return analyzeSnapshot(snapshotOf(res));
}

/** analyzeResponse on the core's view of the response (what the analysis pool's threads receive). */
export function analyzeSnapshot(input: AnalysisInput): ResponseAnalysis {
  const { charset, ...view } = input;
  const snap: ResponseSnapshot = charset !== undefined && typeof view.body !== 'string' ? { ...view, body: decodeText(view.body, charset) } : view;
  const { result: validation, page } = validateResponseDetailed(snap);
  return { validation, heuristics: extractResponseHeuristics(snap, validation), textSha256: textFingerprint(snap.body, page) };
}

/**
 * The page's text fingerprint: sha256 hex of its title and visible text as the validation extracted them (whitespace
 * collapsed; no script, style, template or noscript contents, no attributes), so markup that differs at every
 * response (a CSRF `<meta>` token, script nonces, hidden form tokens, cache-busting asset URLs) leaves it alone.
 * Null for non-HTML, and for a body longer than the analysis reads (its tail, unread, could be what changed).
 */
export function textFingerprint(body: string | Uint8Array, page: PageFeatures | null): string | null {
  if (page === null) return null;
  // decodeBody cuts a string at MAX_ANALYSED_BYTES characters and bytes at as many bytes.
  if ((typeof body === 'string' ? body.length : body.byteLength) > MAX_ANALYSED_BYTES) return null;
  // Collapsed text holds no newline: the separator keeps a title's last word from running into the text.
  return createHash('sha256').update(page.title).update('\n').update(page.visibleText).digest('hex');
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
