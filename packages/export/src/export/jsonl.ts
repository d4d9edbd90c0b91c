import type { ExportedPage } from '@crawler/db';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * One JSONL line for a page. The body is lossless either way: `bodyEncoding: 'utf8'` when its bytes are valid UTF-8
 * (the text is then the bytes), else `'base64'` (PDFs, images, pages in legacy charsets: decode with `charset`
 * of `headers['content-type']`). `sha256` is the body's, so a consumer can verify what it decoded.
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
  return `${JSON.stringify({
    id: page.id.toString(),
    linkId: page.linkId,
    url: page.url,
    finalUrl: page.finalUrl,
    linkStatus: page.linkStatus,
    httpStatus: page.httpStatus,
    contentType: page.headers?.['content-type'] ?? page.contentType,
    fetcher: page.fetcher,
    fetchedAt: page.fetchedAt.toISOString(),
    sha256: page.sha256,
    sizeBytes: page.sizeBytes,
    version: page.version,
    headers: page.headers,
    bodyEncoding,
    body,
  })}\n`;
}
