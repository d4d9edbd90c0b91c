import { FETCHERS, canonicalFetcherName } from '@crawler/core';
import { decodeText, isTextualType, mimeTypeOf, sniffCharset } from '@crawler/fetchers';
import type { Decision, FetchJobContext } from './fetch-outcome.js';
import type { FetchDeps, Try } from './fetch-processor.js';

/**
 * Conditional requests on revisits. A link whose latest stored version was fetched with plain HTTP and carried an
 * `ETag` or `Last-Modified` is asked again with `If-None-Match` / `If-Modified-Since`; a 304 confirms the stored page
 * (no body is stored, the visit is logged `not_modified`) and counts as a successful attempt of plain HTTP: the site
 * answered the tool, which is what the learned router needs to know.
 *
 * Only plain HTTP sends them: a browser's navigation cannot be made conditional without losing the rendered page,
 * and a version stored by a browser was rendered, so the server's validators do not describe it.
 */
export async function conditionalHeaders(deps: FetchDeps, ctx: FetchJobContext): Promise<Record<string, string> | undefined> {
  if (!deps.revisits || canonicalFetcherName(ctx.fetcher) !== FETCHERS.simpleHttp) return undefined;
  // A link never attempted has no stored page: no read for first visits, the common case.
  if (ctx.conditional === undefined) ctx.conditional = ctx.link.lastAttemptAt ? await deps.revisits.validators(ctx.link.id) : null;
  const v = ctx.conditional;
  if (!v || canonicalFetcherName(v.fetcher) !== FETCHERS.simpleHttp || (!v.etag && !v.lastModified)) return undefined;
  const headers: Record<string, string> = {};
  if (v.etag) headers['if-none-match'] = v.etag;
  if (v.lastModified) headers['if-modified-since'] = v.lastModified;
  return headers;
}

/** The attempt is a 304 answering this job's conditional request (a 304 we did not ask for is not one). */
export function isNotModified(ctx: FetchJobContext, attempt: Try): boolean {
  const v = ctx.conditional;
  return attempt.response?.status === 304 && canonicalFetcherName(ctx.fetcher) === FETCHERS.simpleHttp && !!v && (!!v.etag || !!v.lastModified);
}

/** A success decision for a 304 to our conditional request, or null for any other attempt. */
export function notModifiedDecision(ctx: FetchJobContext, attempt: Try): Decision | null {
  if (!isNotModified(ctx, attempt)) return null;
  return { kind: 'success', success: true, isBanned: false, errorType: null, riskLevel: 0, reason: 'not_modified' } as Decision;
}

/** The stored page a 304 confirmed, decoded as the fetcher would have, for the crawl's link discovery. */
export async function revisitedPageText(deps: FetchDeps, ctx: FetchJobContext): Promise<{ finalUrl: string; contentType: string | null; httpStatus: number; text: string | null; charset?: string; headers?: Record<string, string> } | null> {
  const page = await deps.revisits?.latestPage(ctx.link.id);
  if (!page) return null;
  const rawType = page.headers?.['content-type'] ?? page.contentType ?? undefined;
  const mime = mimeTypeOf(rawType);
  const charset = isTextualType(mime, page.body) ? sniffCharset(page.body, rawType) : undefined;
  const text = charset === undefined ? null : decodeText(page.body, charset);
  return { finalUrl: page.finalUrl, contentType: page.contentType, httpStatus: 200, text, ...(charset === undefined ? {} : { charset }), ...(page.headers ? { headers: page.headers } : {}) };
}
