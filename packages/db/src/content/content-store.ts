import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants as zlib, gunzip } from 'node:zlib';
import { canonicalFetcherName, NonRetryableError, systemClock, type Clock } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import type { StoreDeps } from '../attempts/types.js';

const compress = promisify(brotliCompress);
const decompressBr = promisify(brotliDecompress);
const decompressGzip = promisify(gunzip);

/**
 * Brotli quality for stored pages. 5 compresses HTML to about a fifth at a few ms per 100 KB; 11 saves a few more
 * percent for ~20× the CPU, which a fetch worker cannot spare.
 */
export const CONTENT_BROTLI_QUALITY = 5;

/** A page to store. */
export interface ContentInput {
  linkId: string;
  /** The raw (decoded) body. */
  body: Uint8Array;
  contentType?: string | null;
  httpStatus: number;
  finalUrl: string;
  fetcher: string;
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
  /** Raw body size. */
  sizeBytes: number;
  /** Bytes actually stored (compressed). */
  storedBytes: number;
  fetcher: string;
  fetchedAt: Date;
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
    if (!(input.body instanceof Uint8Array)) throw new NonRetryableError('invalid_content', 'body must be a Uint8Array', { url: input.finalUrl });
    const sha256 = createHash('sha256').update(input.body).digest('hex');
    const compressed = await compress(input.body, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: CONTENT_BROTLI_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: input.body.byteLength },
    });
    const row = await withDbErrors('save content', () =>
      this.#prisma.fetchedContent.create({
        data: {
          linkId: input.linkId,
          body: new Uint8Array(compressed.buffer, compressed.byteOffset, compressed.byteLength),
          encoding: 'br',
          contentType: input.contentType ?? null,
          httpStatus: input.httpStatus,
          finalUrl: input.finalUrl,
          sha256,
          sizeBytes: input.body.byteLength,
          fetcher: canonicalFetcherName(input.fetcher),
          fetchedAt: this.#clock.now(),
        },
        select: { id: true, linkId: true, contentType: true, httpStatus: true, finalUrl: true, sha256: true, sizeBytes: true, fetcher: true, fetchedAt: true },
      }),
    );
    return { ...row, storedBytes: compressed.byteLength };
  }

  /** A stored page by id, or null. */
  async get(id: bigint): Promise<StoredContent | null> {
    const row = await withDbErrors('get content', () => this.#prisma.fetchedContent.findUnique({ where: { id } }));
    return row ? decode(row) : null;
  }

  /** The most recent page stored for a link, or null. */
  async latestForLink(linkId: string): Promise<StoredContent | null> {
    const row = await withDbErrors('latest content', () =>
      this.#prisma.fetchedContent.findFirst({ where: { linkId }, orderBy: [{ fetchedAt: 'desc' }, { id: 'desc' }] }),
    );
    return row ? decode(row) : null;
  }
}

async function decode(row: {
  id: bigint; linkId: string; body: Uint8Array; encoding: string; contentType: string | null; httpStatus: number;
  finalUrl: string; sha256: string; sizeBytes: number; fetcher: string; fetchedAt: Date;
}): Promise<StoredContent> {
  const stored = row.body;
  let body: Uint8Array;
  if (row.encoding === 'br') body = await decompressBr(stored);
  else if (row.encoding === 'gzip') body = await decompressGzip(stored);
  else body = stored;
  return {
    id: row.id, linkId: row.linkId, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
    contentType: row.contentType, httpStatus: row.httpStatus, finalUrl: row.finalUrl, sha256: row.sha256,
    sizeBytes: row.sizeBytes, storedBytes: stored.byteLength, fetcher: row.fetcher, fetchedAt: row.fetchedAt,
  };
}
