import { createHash } from 'node:crypto';
import {
  classifyProbe,
  errorTypeOf,
  extractResponseHeuristics,
  isWindows1252Label,
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
  const snap: ResponseSnapshot = charset !== undefined && typeof view.body !== 'string'
    ? { ...view, body: decodeText(view.body.subarray(0, analysedByteCount(input)), charset) }
    : view;
  const { result: validation, page } = validateResponseDetailed(snap);
  return { validation, heuristics: extractResponseHeuristics(snap, validation), textSha256: textFingerprint(snap.body, page) };
}

/** UTF-8's labels, lower-case as sniffCharset gives them. */
const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8']);

/**
 * How many of a byte body's first bytes the analysis needs: it reads MAX_ANALYSED_BYTES characters of the text (UTF-16
 * units), and only whether there are more (then the fingerprint is null). A unit takes at most 3 bytes in UTF-8
 * (a 4-byte character is 2 units; a bad byte run of up to 3 is 1) and 1 in windows-1252, and a BOM and a character
 * cut at the end take a few more: so many bytes decode to the same first units, and more than MAX_ANALYSED_BYTES of
 * them. Other charsets (ISO-2022-JP spends any number of bytes on escapes) and a prefix without any ASCII non-space
 * byte (whether the body is blank is read from all of it) need the whole body. A 10 MiB page is then not decoded whole,
 * nor copied whole to the analysis thread, to read 2 MiB of it.
 */
export function analysedByteCount(input: AnalysisInput): number {
  const body = input.body;
  if (input.charset === undefined || typeof body === 'string') return typeof body === 'string' ? body.length : body.byteLength;
  const unitBytes = UTF8_LABELS.has(input.charset) ? 3 : isWindows1252Label(input.charset) ? 1 : 0;
  const limit = unitBytes * (MAX_ANALYSED_BYTES + 4);
  if (unitBytes === 0 || body.byteLength <= limit) return body.byteLength;
  for (let i = 0; i < limit; i++) {
    const b = body[i]!;
    if (b < 0x80 && b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d) return limit;
  }
  return body.byteLength;
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
