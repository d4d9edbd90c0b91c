import { createHash } from 'node:crypto';
import { ContentStore, LinkStore, type PrismaClient, type StoredContent } from '@crawler/db';
import type { ContentFormat } from './format-content.js';
import { formatPage } from './format-pool.js';

/** A page as handed out: the body to send and its headers. */
export interface ContentResponse {
  body: Uint8Array;
  /** Content-Type to answer with: the original one for raw, UTF-8 text or Markdown otherwise. */
  contentType: string;
  /** Strong ETag: the sha256 of what is sent. */
  etag: string;
  /** The stored page it comes from. */
  page: Omit<StoredContent, 'body'>;
}

/** The Content-Type the page was fetched with (charset included), else the stored MIME type. */
export function originalContentType(page: Pick<StoredContent, 'headers' | 'contentType'>): string {
  return page.headers?.['content-type'] ?? page.contentType ?? 'application/octet-stream';
}

/**
 * A link's stored page in `format`: its latest version, or version `version` (1, 2, … in fetch order); null when the
 * link has none (or no such version: never fetched, or pruned). Throws UnsupportedFormatError.
 */
export async function readContent(prisma: PrismaClient, linkId: string, format: ContentFormat, version?: number): Promise<ContentResponse | null> {
  const store = new ContentStore({ prisma });
  const stored = version === undefined ? await store.latestForLink(linkId) : await store.versionForLink(linkId, version);
  if (!stored) return null;
  const { body, ...page } = stored;
  if (format === 'raw') return { body, contentType: originalContentType(stored), etag: `"${stored.sha256}"`, page };
  // No type at all stays null for the converters, which sniff the bytes; octet-stream would refuse an untyped HTML page.
  const input = { body, contentType: stored.headers?.['content-type'] ?? stored.contentType ?? null, finalUrl: stored.finalUrl };
  const out = await formatPage(format, input);
  const bytes = Buffer.from(out.text, 'utf8');
  return {
    body: bytes,
    contentType: format === 'text' ? 'text/plain; charset=utf-8' : 'text/markdown; charset=utf-8',
    etag: `"${createHash('sha256').update(bytes).digest('hex')}"`,
    page,
  };
}

/**
 * Why a link has no stored page, in one sentence for the 404 of `GET /links/:id/content` and `crawl content`: it does
 * not exist, it failed (with its error), or it is not fetched yet (with its status).
 */
export async function noContentReason(prisma: PrismaClient, linkId: string): Promise<string> {
  const link = await new LinkStore(prisma).get(linkId);
  if (!link) return `no link ${linkId}`;
  if (link.status === 'failed') {
    // The error in words usually starts with or names its type ('max_attempts:network_error: …'): not said twice.
    const type = link.lastErrorType;
    const text = link.lastError;
    const why = text ? (type && !text.includes(type) ? `${type}: ${text}` : text) : (type ?? 'unknown error');
    return `link ${linkId} failed (${why}); no page was stored`;
  }
  // A crawl's link that landed off the crawl's scope is settled without a page; its lastError says where it went.
  if (link.status === 'done') return link.lastError ? `link ${linkId} is done but has no stored page: ${link.lastError}` : `link ${linkId} is done but has no stored page`;
  return `no stored page for link ${linkId} yet: it is ${link.status}`;
}
