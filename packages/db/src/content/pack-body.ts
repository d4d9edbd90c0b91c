import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants as zlib } from 'node:zlib';

const compress = promisify(brotliCompress);

/**
 * Brotli quality for stored pages. Measured on the crawl bench's 10–60 KB article pages (mean 38 KB): quality 1
 * stores 11.4 KB at 0.14 ms of CPU per page, quality 4 10.8 KB at 0.48 ms, quality 5 10.1 KB at 1.45 ms. A fetch
 * worker stores every page it fetches, so the 12% smaller rows of quality 5 are not worth 10× the CPU.
 */
export const CONTENT_BROTLI_QUALITY = 1;

/** Bodies up to this size are compressed synchronously (well under a millisecond at quality 1). */
export const SYNC_COMPRESS_MAX_BYTES = 256 * 1024;

/** A page body as fetched_content stores it: brotli-compressed, with the sha256 (hex) of the raw bytes. */
export interface PackedBody {
  compressed: Uint8Array;
  sha256: string;
}

function options(body: Uint8Array) {
  return { params: { [zlib.BROTLI_PARAM_QUALITY]: CONTENT_BROTLI_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: body.byteLength } };
}

/**
 * Pack a body on the calling thread. Light to import (no database client): the fetch worker's response-analysis
 * thread packs the pages it analyses, so the event loop that runs the jobs does not compress them.
 */
export function packBodySync(body: Uint8Array): PackedBody {
  return { compressed: brotliCompressSync(body, options(body)), sha256: createHash('sha256').update(body).digest('hex') };
}

/** Pack a body: a typical page on the calling thread, a big one (up to the 10 MiB fetch cap, ~35 ms) on the thread pool. */
export async function packBody(body: Uint8Array): Promise<PackedBody> {
  if (body.byteLength <= SYNC_COMPRESS_MAX_BYTES) return packBodySync(body);
  return { compressed: await compress(body, options(body)), sha256: createHash('sha256').update(body).digest('hex') };
}
