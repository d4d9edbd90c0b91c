import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompress, constants as zlib, gunzip } from 'node:zlib';
import { archivedResponseHeaders, canonicalFetcherName, CrawlerError, LINK_STATUSES, systemClock, type Clock } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { sqlOf } from '../sql.js';
import type { StoreDeps } from '../attempts/types.js';

const compress = promisify(brotliCompress);
const decompressBr = promisify(brotliDecompress);
const decompressGzip = promisify(gunzip);

/**
 * Brotli quality for stored pages. Measured on the crawl bench's 10–60 KB article pages (mean 38 KB): quality 1
 * stores 11.4 KB at 0.14 ms of CPU per page, quality 4 10.8 KB at 0.48 ms, quality 5 10.1 KB at 1.45 ms. A fetch
 * worker stores every page it fetches, so the 12% smaller rows of quality 5 are not worth 10× the CPU.
 */
export const CONTENT_BROTLI_QUALITY = 1;

/** Bodies up to this size are compressed on the event loop (well under a millisecond at quality 1). */
const SYNC_COMPRESS_MAX_BYTES = 256 * 1024;

// One round trip, no Prisma query engine: this runs once per fetched page.
// Parameters $1..$11 are prepareContentRow's params, in its order.
export const CONTENT_INSERT_INTO = 'INSERT INTO fetched_content (link, body, encoding, content_type, http_status, final_url, sha256, size_bytes, fetcher, fetched_at, response_headers, text_sha256)';
export const CONTENT_ROW_AFTER_LINK = "$2, 'br', $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::text";

const SAVE_SQL = `
${CONTENT_INSERT_INTO}
VALUES ($1::uuid, ${CONTENT_ROW_AFTER_LINK})
RETURNING id::text AS id, version`;

// The same insert, and the link marked done, in one statement; the insert only happens when the link exists.
const SAVE_AND_COMPLETE_SQL = `
WITH done AS (
  UPDATE links SET status = '${LINK_STATUSES.done}', risk_level = 0, paused_until = NULL, fetcher = $8, last_error_type = NULL, last_error = NULL,
    attempt_count = attempt_count + $12::int, last_attempt_at = coalesce($13::timestamptz, last_attempt_at), updated_at = now()
  WHERE id = $1::uuid
  RETURNING id
), saved AS (
  ${CONTENT_INSERT_INTO}
  SELECT done.id, ${CONTENT_ROW_AFTER_LINK} FROM done
  RETURNING id, version
)
SELECT (SELECT id::text FROM saved) AS id, (SELECT version FROM saved) AS version`;

/** A page to store. */
export interface ContentInput {
  linkId: string;
  /** The raw (decoded) body. */
  body: Uint8Array;
  contentType?: string | null;
  httpStatus: number;
  finalUrl: string;
  fetcher: string;
  /** Response headers as fetched (lower-case names); stored through archivedResponseHeaders, so never cookies. */
  headers?: Record<string, string> | null;
  /**
   * sha256 hex of the page's visible text (the fetch worker's text fingerprint): a version whose text has the previous
   * version's fingerprint is not a change. @defaultValue null: no fingerprint (non-HTML), changes are told by sha256
   */
  textSha256?: string | null;
}

/** A stored page, body decompressed. */
export interface StoredContent {
  id: bigint;
  linkId: string;
  body: Uint8Array;
  contentType: string | null;
  httpStatus: number;
  finalUrl: string;
  /** sha256 hex of the raw body. */
  sha256: string;
  /** sha256 hex of the page's visible text, or null (non-HTML, or stored without one). */
  textSha256: string | null;
  /** Raw body size. */
  sizeBytes: number;
  /** Bytes actually stored (compressed). */
  storedBytes: number;
  fetcher: string;
  fetchedAt: Date;
  /** Response headers as fetched (cookies excepted); null for pages stored before headers were kept. */
  headers: Record<string, string> | null;
  /** 1, 2, … per link in fetch order. */
  version: number;
}

/** Fetched pages (fetched_content): one row per successful fetch, brotli-compressed. */
export class ContentStore {
  readonly #prisma: PrismaClient;
  readonly #clock: Clock;

  constructor(deps: StoreDeps) {
    this.#prisma = deps.prisma;
    this.#clock = deps.clock ?? systemClock;
  }

  /** Compress and store a page; returns the row without the body. */
  async save(input: ContentInput): Promise<Omit<StoredContent, 'body'>> {
    const row = await prepareContentRow(input, this.#clock.now());
    const [out] = await withDbErrors('save content', () => sqlOf(this.#prisma).query<{ id: string; version: number }>(SAVE_SQL, row.params));
    return { ...row.result, id: BigInt(out!.id), version: out!.version };
  }

  /**
   * Store a page and mark its link done in one statement, counting `attemptsMade` attempts without logging them.
   * For fixtures and tools that put pages in by hand; the crawler writes a fetch's outcome, attempts included,
   * through OutcomeStore. Returns null, storing nothing, when the link does not exist.
   */
  async saveAndComplete(input: ContentInput, link: { attemptsMade?: number; lastAttemptAt?: Date } = {}): Promise<Omit<StoredContent, 'body'> | null> {
    const row = await prepareContentRow(input, this.#clock.now());
    const [out] = await withDbErrors('save content and complete link', () =>
      sqlOf(this.#prisma).query<{ id: string | null; version: number | null }>(SAVE_AND_COMPLETE_SQL, [...row.params, link.attemptsMade ?? 0, link.lastAttemptAt ?? null]),
    );
    return out?.id ? { ...row.result, id: BigInt(out.id), version: out.version ?? 1 } : null;
  }

  /** A stored page by id, or null. */
  async get(id: bigint): Promise<StoredContent | null> {
    const row = await withDbErrors('get content', () => this.#prisma.fetchedContent.findUnique({ where: { id } }));
    return row ? decode(row) : null;
  }

  /** The most recent page stored for a link (its latest version), or null. */
  async latestForLink(linkId: string): Promise<StoredContent | null> {
    const row = await withDbErrors('latest content', () =>
      this.#prisma.fetchedContent.findFirst({ where: { linkId }, orderBy: [{ version: 'desc' }] }),
    );
    return row ? decode(row) : null;
  }

  /** Version `version` (1, 2, … in fetch order) of a link's page, or null when there is no such version (or it was pruned). */
  async versionForLink(linkId: string, version: number): Promise<StoredContent | null> {
    const row = await withDbErrors('content version', () =>
      this.#prisma.fetchedContent.findUnique({ where: { linkId_version: { linkId, version } } }),
    );
    return row ? decode(row) : null;
  }
}

async function decode(row: {
  id: bigint; linkId: string; body: Uint8Array; encoding: string; contentType: string | null; httpStatus: number;
  finalUrl: string; sha256: string; textSha256?: string | null; sizeBytes: number; fetcher: string; fetchedAt: Date; responseHeaders?: unknown; version: number;
}): Promise<StoredContent> {
  const stored = row.body;
  let body: Uint8Array;
  if (row.encoding === 'br') body = await decompressBr(stored);
  else if (row.encoding === 'gzip') body = await decompressGzip(stored);
  else body = stored;
  return {
    id: row.id, linkId: row.linkId, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
    contentType: row.contentType, httpStatus: row.httpStatus, finalUrl: row.finalUrl, sha256: row.sha256, textSha256: row.textSha256 ?? null,
    sizeBytes: row.sizeBytes, storedBytes: stored.byteLength, fetcher: row.fetcher, fetchedAt: row.fetchedAt,
    headers: (row.responseHeaders as Record<string, string> | null | undefined) ?? null,
    version: row.version,
  };
}

/**
 * A page as the parameters of an insert into fetched_content ($1 link, then {@link CONTENT_ROW_AFTER_LINK}'s
 * $2..$11, in this order) and the row it becomes, compressed with brotli. The outcome statement uses it too.
 */
export async function prepareContentRow(input: ContentInput, fetchedAt: Date): Promise<{ params: unknown[]; result: Omit<StoredContent, 'body' | 'id' | 'version'> }> {
  if (!(input.body instanceof Uint8Array)) throw new CrawlerError('invalid_content', 'body must be a Uint8Array', { url: input.finalUrl });
  const sha256 = createHash('sha256').update(input.body).digest('hex');
  const options = { params: { [zlib.BROTLI_PARAM_QUALITY]: CONTENT_BROTLI_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: input.body.byteLength } };
  // A typical page compresses in ~0.13 ms on the event loop, where the thread-pool round trip alone costs ~0.2 ms
  // more; a big body (up to the 10 MiB fetch cap, ~35 ms) goes to the thread pool so it never stalls other jobs.
  const compressed = input.body.byteLength <= SYNC_COMPRESS_MAX_BYTES ? brotliCompressSync(input.body, options) : await compress(input.body, options);
  const fetcher = canonicalFetcherName(input.fetcher);
  const contentType = input.contentType ?? null;
  const headers = input.headers ? archivedResponseHeaders(input.headers) : null;
  const textSha256 = input.textSha256 ?? null;
  return {
    params: [input.linkId, compressed, contentType, input.httpStatus, input.finalUrl, sha256, input.body.byteLength, fetcher, fetchedAt, headers ? JSON.stringify(headers) : null, textSha256],
    result: {
      linkId: input.linkId, contentType, httpStatus: input.httpStatus, finalUrl: input.finalUrl, sha256, textSha256,
      sizeBytes: input.body.byteLength, storedBytes: compressed.byteLength, fetcher, fetchedAt, headers,
    },
  };
}
