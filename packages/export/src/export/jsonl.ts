import { bodyCharset } from '@crawler/core';
import type { ExportedPage } from '@crawler/db';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// Characters JSON.stringify leaves raw that line readers take for line ends: Python's str.splitlines() and
// io.TextIOWrapper(newline=None) split on NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR, so a page carrying one (pasted
// text, a script's string) broke its line in two for such a consumer. Written as \u escapes, the line reads the same.
const LINE_BREAKERS = /[\u0085\u2028\u2029]/g;
const escapeLineBreaker = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Media types whose body is text in some charset. */
function isTextual(mime: string): boolean {
  return mime.startsWith('text/') || mime.endsWith('+xml') || mime.endsWith('+json') || ['application/xml', 'application/json', 'application/javascript'].includes(mime);
}

/**
 * One JSONL line for a page. The body is lossless either way: `bodyEncoding: 'utf8'` when its bytes are valid UTF-8
 * (the text is then the bytes), else `'base64'` (PDFs, images, pages in legacy charsets). `charset` is what a text
 * body is written in, as the crawler read it (a BOM, the Content-Type's charset, else the page's own `<meta charset>`
 * or XML declaration, else UTF-8): a page in windows-1251 often names it in its markup alone. Null when the body is
 * not text. `sha256` is the body's, so a consumer can verify what it decoded.
 */
export function jsonlLine(page: ExportedPage): string {
  let body: string;
  let bodyEncoding: 'utf8' | 'base64';
  try {
    body = strictUtf8.decode(page.body);
    bodyEncoding = 'utf8';
  } catch {
    body = Buffer.from(page.body.buffer, page.body.byteOffset, page.body.byteLength).toString('base64');
    bodyEncoding = 'base64';
  }
  const contentType = page.headers?.['content-type'] ?? page.contentType;
  const mime = contentType?.split(';')[0]!.trim().toLowerCase() || null;
  const json = JSON.stringify({
    id: page.id.toString(),
    linkId: page.linkId,
    url: page.url,
    finalUrl: page.finalUrl,
    linkStatus: page.linkStatus,
    httpStatus: page.httpStatus,
    contentType,
    charset: mime && isTextual(mime) ? bodyCharset(page.body, contentType) : null,
    fetcher: page.fetcher,
    fetchedAt: page.fetchedAt.toISOString(),
    sha256: page.sha256,
    sizeBytes: page.sizeBytes,
    version: page.version,
    headers: page.headers,
    bodyEncoding,
    body,
  });
  return `${json.replace(LINE_BREAKERS, escapeLineBreaker)}\n`;
}
