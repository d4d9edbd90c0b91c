// How a page's body is kept in fetched_content: brotli at CONTENT_BROTLI_QUALITY, with the raw body's sha256 and
// size. No database here: the fetch worker's response-analysis threads import it to encode a page off the event loop.
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

/** Bodies up to this size are compressed on the calling thread (well under a millisecond at quality 1). */
const SYNC_COMPRESS_MAX_BYTES = 256 * 1024;

/** A body as stored: compressed, and what identifies the raw bytes. */
export interface EncodedBody {
  /** The body brotli-compressed (fetched_content.encoding 'br'): a plain Uint8Array, which is what crosses threads. */
  br: Uint8Array;
  /** sha256 hex of the raw body. */
  sha256: string;
  /** The raw body's size: a check that an encoding handed along belongs to the body it travels with. */
  sizeBytes: number;
}

function optionsFor(body: Uint8Array) {
  return { params: { [zlib.BROTLI_PARAM_QUALITY]: CONTENT_BROTLI_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: body.byteLength } };
}

/** A Buffer's bytes as a plain Uint8Array (a view): an encoding is the same value on either side of postMessage. */
function plain(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function sha256Of(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}

/** Encode on this thread, whatever the size (a response-analysis thread, which has nothing else to do meanwhile). */
export function encodeBodySync(body: Uint8Array): EncodedBody {
  return { br: plain(brotliCompressSync(body, optionsFor(body))), sha256: sha256Of(body), sizeBytes: body.byteLength };
}

/**
 * Encode a body for storage. A typical page compresses in ~0.13 ms on the calling thread, where the thread pool's
 * round trip alone costs ~0.2 ms more; a big body (up to the 10 MiB fetch cap, ~35 ms) goes to the thread pool so it
 * never stalls an event loop.
 */
export async function encodeBody(body: Uint8Array): Promise<EncodedBody> {
  if (body.byteLength <= SYNC_COMPRESS_MAX_BYTES) return encodeBodySync(body);
  const br = await compress(body, optionsFor(body));
  return { br: plain(br), sha256: sha256Of(body), sizeBytes: body.byteLength };
}
