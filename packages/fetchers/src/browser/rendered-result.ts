import type { Page, Request, Response } from 'playwright-core';
import type { PreparedRequest } from '../base-fetcher.js';
import type { FetchResult } from '../contract.js';
import { FetchError } from '../errors.js';
import { decodeText, isTextualType, mimeTypeOf, sniffCharset } from '../http/decode.js';
import { fileAt, type FileAtUrl } from './file-request.js';
import { renderedVerdict, type ChallengeEncounter } from './challenge-wait.js';

/** Types Chromium renders as a page of their own: its DOM is the page. An untyped document is judged by what Chromium made of it. */
export const RENDERED_TYPES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml']);
/** Types Chromium's PDF viewer takes over: the response's body is then the viewer's page, not the PDF. */
const PDF_TYPES: ReadonlySet<string> = new Set(['application/pdf', 'application/x-pdf']);

/** The page as the render left it, to be made a result. */
export interface RenderedPage {
  /** The latest main-frame document's response. */
  current: Response;
  /** The rendered HTML, or null for a document Chromium shows in a viewer of its own. */
  html: string | null;
  headers: Record<string, string>;
  encounter: ChallengeEncounter | null;
}

/**
 * The result of a rendered page: its HTML written out as UTF-8, or the bytes of a document Chromium showed in a
 * viewer, or the file a PDF's viewer took over.
 */
export async function renderedResult(page: Page, req: PreparedRequest, fetcher: string, rendered: RenderedPage): Promise<FetchResult | FileAtUrl> {
  const { current, encounter } = rendered;
  let { html, headers } = rendered;
  const redirectChain = redirectChainOf(current.request());
  const contentType = mimeTypeOf(headers['content-type']);
  // A document that is not HTML (JSON, plain text, XML, an image) is shown in a viewer of Chromium's own: the page's
  // HTML is the viewer's, so the result is the bytes the site sent. A PDF's viewer takes its bytes: the file is
  // asked for again with the page's cookies, as for a download.
  if (contentType !== null && !RENDERED_TYPES.has(contentType)) {
    if (PDF_TYPES.has(contentType)) return await fileAt(page, current, redirectChain, encounter);
    html = null;
  }
  const body = html === null ? new Uint8Array(await current.body()) : new TextEncoder().encode(html);
  // The rendered page is written out as UTF-8, whatever charset the site served it in: its Content-Type says so, or
  // everything that reads the stored page (content, exports, a revisit's links) decodes it as windows-1252 or
  // Shift_JIS and shows mojibake. (The header outranks a <meta charset> left in the markup.)
  if (html !== null && headers['content-type']) headers = { ...headers, 'content-type': withUtf8Charset(headers['content-type']) };
  // So is the text of a document Chromium shows in its viewer (text/plain, JSON, XML): the body it hands over is
  // its decoding, in UTF-8, not the bytes sent. Bytes that are not UTF-8 were handed over as they came.
  else if (html === null && headers['content-type'] && isTextualType(contentType, body) && isUtf8(body)) headers = { ...headers, 'content-type': withUtf8Charset(headers['content-type']) };
  if (body.length > req.maxBytes) {
    if (html !== null) return await servedInstead(current, req, fetcher);
    throw new FetchError('too_large', `body exceeds ${req.maxBytes} bytes`, { url: req.originalUrl, fetcher });
  }
  const text = !isTextualType(contentType, body) ? null : (html ?? decodeText(body, sniffCharset(body, headers['content-type'])));
  // What the document was read in, handed on beside its UTF-8: its links' queries are written in it, as the browser
  // writes them. Not for a page a failed navigation left behind (what is on screen is Chromium's error page).
  const documentCharset = text !== null ? await documentCharsetOf(page) : undefined;
  return {
    fetcher,
    url: req.originalUrl,
    finalUrl: page.url(),
    status: current.status(),
    headers,
    body,
    contentType,
    text,
    ...(documentCharset ? { documentCharset } : {}),
    redirectChain,
    ...(encounter ? { challenge: encounter } : {}),
    timings: { startedAt: req.startedAt, headersMs: null, totalMs: Date.now() - req.startedAt },
  };
}

/** The result of the crawler's navigation answered with a status Chromium shows no document for: no body. */
export async function noDocumentResult(fetcher: string, req: PreparedRequest, empty: Response): Promise<FetchResult> {
  return responseResult(fetcher, req, empty, await empty.allHeaders(), new Uint8Array(0), null);
}

/** A result made of one response of the navigation, as the site sent it: its URL, status, headers and redirect chain. */
function responseResult(fetcher: string, req: PreparedRequest, response: Response, headers: Record<string, string>, body: Uint8Array, text: string | null): FetchResult {
  return {
    fetcher,
    url: req.originalUrl,
    finalUrl: response.url(),
    status: response.status(),
    headers,
    body,
    contentType: mimeTypeOf(headers['content-type']),
    text,
    redirectChain: redirectChainOf(response.request()),
    timings: { startedAt: req.startedAt, headersMs: null, totalMs: Date.now() - req.startedAt },
  };
}

/**
 * The rendered page outgrew the byte cap. When the page as served fits and reads as a page (neither empty nor a
 * challenge), it is the result, as served: Chromium's serialisation quotes every attribute and closes every element,
 * so a page of bare links grows by half, while the bytes the site sent are what plain HTTP would have stored, and the
 * browser already holds them (no second request, and a fleet of browsers only keeps the page too). Otherwise it is
 * too large for any tool.
 */
export async function servedInstead(served: Response, req: PreparedRequest, fetcher: string): Promise<FetchResult> {
  const body = await served.body().catch(() => null);
  if (body !== null && body.length > 0 && body.length <= req.maxBytes) {
    const headers = await served.allHeaders().catch(() => ({}) as Record<string, string>);
    const text = decodeText(body, sniffCharset(body, headers['content-type']));
    const verdict = renderedVerdict(served.status(), headers, text);
    if (!verdict.isEmpty && verdict.challenge === undefined) return responseResult(fetcher, req, served, headers, new Uint8Array(body), text);
  }
  throw new FetchError('too_large', `rendered HTML exceeds ${req.maxBytes} bytes`, { url: req.originalUrl, fetcher });
}

/** The URLs the request was redirected from, the first request's first. */
export function redirectChainOf(request: Request): string[] {
  const chain: string[] = [];
  for (let r = request.redirectedFrom(); r; r = r.redirectedFrom()) chain.unshift(r.url());
  return chain;
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The encoding Chromium read the page's document in (`document.characterSet`), lower-case as plain HTTP names it. */
async function documentCharsetOf(page: Page): Promise<string | undefined> {
  const name = await page.evaluate(() => document.characterSet).catch(() => null);
  return typeof name === 'string' && name !== '' ? name.toLowerCase() : undefined;
}

/** A Content-Type naming UTF-8 as its charset, in place of the one it named or added to it. */
function withUtf8Charset(contentType: string): string {
  const params = contentType.split(';').filter((p, i) => i === 0 || !/^\s*charset\s*=/i.test(p));
  return [...params, ' charset=utf-8'].join(';');
}
