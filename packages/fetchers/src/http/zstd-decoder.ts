import { Duplex } from 'node:stream';
import { Decompress } from 'fzstd';

/**
 * The largest window a `zstd` frame may ask for: RFC 9659 caps the content coding at 8 MiB, and Chrome and Firefox
 * refuse a larger frame before decoding a byte (ERR_ZSTD_WINDOW_SIZE_TOO_BIG), so no site a browser reads needs more.
 */
export const ZSTD_MAX_WINDOW_BYTES = 8 * 1024 * 1024;

/** The largest block the format allows (Block_Maximum_Size is at most 128 KiB). */
const MAX_BLOCK_BYTES = 128 * 1024;

// fzstd keeps a frame's window in one array that it shifts by every block it decodes, so each block (an empty one
// too) costs the whole window: 1.9 ms for an 8 MiB window, measured, and 4 KB of one-byte blocks cost 1.85 s of CPU.
// Decoding that is allowed as much window work as 256 MiB (about 60 ms) plus 128 times what it decoded: a page
// streamed in 128 KiB blocks under an 8 MiB window does 64 times, and one flushed every 16 KiB under 2 MiB 128 times.
const WINDOW_WORK_FREE_BYTES = 256 * 1024 * 1024;
const WINDOW_WORK_PER_DECODED_BYTE = 128;

/** Why a zstd body could not be decoded, as a stable `code`. */
export type ZstdErrorCode = 'ZSTD_CORRUPT' | 'ZSTD_TRUNCATED' | 'ZSTD_WINDOW_TOO_LARGE' | 'ZSTD_TOO_COSTLY';

/** A zstd body that is no zstd, asks for too much, or stops before its end where its end had to come. */
export class ZstdDecodeError extends Error {
  override name = 'ZstdDecodeError';
  constructor(
    readonly code: ZstdErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;

type FramingState = 'magic' | 'frame-header-descriptor' | 'frame-header' | 'block-header' | 'skip';

/** A place in the compressed stream just past a block's end, and the window work decoding up to it costs in all. */
interface BlockEnd {
  offset: number;
  work: number;
}

/**
 * Follows the frames and blocks of a zstd stream without decoding them, to refuse before fzstd allocates: a window
 * past {@link ZSTD_MAX_WINDOW_BYTES} (fzstd allocates whatever a frame header claims, up to 2 GiB), a dictionary, a
 * block past the format's maximum; and to tell the decoder where each block ends, so it is fed one block at a time.
 */
class ZstdFraming {
  #state: FramingState = 'magic';
  /** Header bytes gathered so far (magic number, frame header, block header), and how many the current one has. */
  #head: number[] = [];
  #headSize = 4;
  /** Bytes still to pass over: a block's body, a checksum, a skippable frame. */
  #skip = 0;
  /** Whether the bytes being passed over are a block's body, so that their end is the block's. */
  #skipEndsBlock = false;
  #window = 0;
  #checksum = false;
  #lastBlock = false;
  #frames = 0;
  /** Window bytes fzstd allocates and shifts for the blocks seen so far. */
  work = 0;

  /** True between frames, once at least one has been seen whole: the stream may end here. */
  get complete(): boolean {
    return this.#state === 'magic' && this.#head.length === 0 && this.#skip === 0 && this.#frames > 0;
  }

  /** The ends of the blocks that finish in `chunk`, in order. Throws ZstdDecodeError on a stream that cannot be decoded. */
  scan(chunk: Uint8Array): BlockEnd[] {
    const ends: BlockEnd[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, chunk.length - i);
        this.#skip -= n;
        i += n;
        if (this.#skip === 0 && this.#skipEndsBlock) {
          this.#skipEndsBlock = false;
          ends.push({ offset: i, work: this.work });
          this.#afterBlock();
        }
        continue;
      }
      this.#head.push(chunk[i++]!);
      if (this.#head.length === this.#headSize) this.#onHeader(ends, i);
    }
    return ends;
  }

  #onHeader(ends: BlockEnd[], offset: number): void {
    const h = this.#head;
    this.#head = [];
    switch (this.#state) {
      case 'magic': {
        const magic = (h[0]! | (h[1]! << 8) | (h[2]! << 16) | (h[3]! << 24)) >>> 0;
        if (magic === ZSTD_MAGIC) return this.#expect('frame-header-descriptor', 1);
        if (((magic & SKIPPABLE_MAGIC_MASK) >>> 0) === SKIPPABLE_MAGIC) return this.#expect('skip', 4);
        throw new ZstdDecodeError('ZSTD_CORRUPT', this.#frames === 0 ? 'not a zstd frame (no zstd magic number)' : 'bytes that are no zstd frame after the last frame');
      }
      case 'skip': {
        this.#skip = (h[0]! | (h[1]! << 8) | (h[2]! << 16) | (h[3]! << 24)) >>> 0;
        this.#frames++;
        return this.#expect('magic', 4);
      }
      case 'frame-header-descriptor': {
        const fhd = h[0]!;
        if (fhd & 0x08) throw new ZstdDecodeError('ZSTD_CORRUPT', 'zstd frame header has its reserved bit set');
        const singleSegment = (fhd >> 5) & 1;
        const contentSizeFlag = fhd >> 6;
        const rest = (singleSegment ? 0 : 1) + [0, 1, 2, 4][fhd & 3]! + (contentSizeFlag ? 1 << contentSizeFlag : singleSegment);
        // At least one byte follows: a window descriptor or a content size.
        this.#head = [fhd];
        return this.#expect('frame-header', 1 + rest);
      }
      case 'frame-header':
        return this.#onFrameHeader(h);
      case 'block-header': {
        const bits = h[0]! | (h[1]! << 8) | (h[2]! << 16);
        const type = (bits >> 1) & 3;
        const size = bits >>> 3;
        if (type === 3) throw new ZstdDecodeError('ZSTD_CORRUPT', 'zstd block of the reserved type');
        if (size > MAX_BLOCK_BYTES) throw new ZstdDecodeError('ZSTD_CORRUPT', `zstd block of ${size} bytes, past the format's 128 KiB`);
        this.#lastBlock = (bits & 1) === 1;
        // Every block, an empty one too, makes fzstd shift the whole window.
        this.work += this.#window;
        this.#skip = type === 1 ? 1 : size;
        if (this.#skip > 0) {
          this.#skipEndsBlock = true;
        } else {
          ends.push({ offset, work: this.work });
          this.#afterBlock();
        }
        return;
      }
    }
  }

  #onFrameHeader(h: number[]): void {
    const fhd = h[0]!;
    const singleSegment = (fhd >> 5) & 1;
    const contentSizeFlag = fhd >> 6;
    let at = singleSegment ? 1 : 2;
    const dictionaryBytes = [0, 1, 2, 4][fhd & 3]!;
    const dictionaryId = readLittleEndian(h, at, dictionaryBytes);
    at += dictionaryBytes;
    // A `zstd` content coding has no dictionary to decode against (dictionary coding has names of its own).
    if (dictionaryId !== 0) throw new ZstdDecodeError('ZSTD_CORRUPT', `zstd frame needs dictionary ${dictionaryId}`);
    let window: number;
    if (singleSegment) {
      const sizeBytes = contentSizeFlag ? 1 << contentSizeFlag : 1;
      window = readLittleEndian(h, at, sizeBytes) + (sizeBytes === 2 ? 256 : 0);
    } else {
      const exponent = (h[1]! >> 3) + 10;
      const base = 2 ** exponent;
      window = base + (base / 8) * (h[1]! & 7);
    }
    if (window > ZSTD_MAX_WINDOW_BYTES) {
      throw new ZstdDecodeError('ZSTD_WINDOW_TOO_LARGE', `zstd frame asks for a ${window}-byte window, past the ${ZSTD_MAX_WINDOW_BYTES} browsers accept`);
    }
    this.#window = window;
    this.#checksum = (fhd & 0x04) !== 0;
    // fzstd allocates the window for each frame.
    this.work += window;
    this.#expect('block-header', 3);
  }

  #afterBlock(): void {
    if (!this.#lastBlock) return this.#expect('block-header', 3);
    this.#frames++;
    this.#skip = this.#checksum ? 4 : 0;
    this.#expect('magic', 4);
  }

  #expect(state: FramingState, size: number): void {
    this.#state = state;
    this.#headSize = size;
  }
}

function readLittleEndian(bytes: number[], at: number, size: number): number {
  let value = 0;
  for (let i = size - 1; i >= 0; i--) value = value * 256 + bytes[at + i]!;
  return value;
}

/**
 * A `content-encoding: zstd` decoder: fzstd (pure JavaScript, as Node 20's zlib has no zstd) fed one block at a time,
 * each block's output pushed as it comes and the next block decoded only once the reader has taken it, so the
 * reader's byte and ratio limits cut a bomb after its first blocks; the window and the work fzstd does per block are
 * bounded before it starts (see {@link ZstdFraming}). `strict`: a stream that stops inside a frame fails with
 * ZSTD_TRUNCATED instead of giving what it decoded so far. Fails with a {@link ZstdDecodeError}.
 */
export function createZstdDecoder(strict = false): Duplex {
  return new ZstdDecoder(strict);
}

// A Duplex rather than Duplex.from(async generator): destroying one of those with an error (the connection failing
// mid-body) left its reader waiting for ever on Node 20.
class ZstdDecoder extends Duplex {
  readonly #strict: boolean;
  readonly #framing = new ZstdFraming();
  readonly #decompress: Decompress;
  #out: Buffer[] = [];
  #decoded = 0;
  /** Resolves when the reader wants more (or the stream is destroyed) after a push the readable side refused. */
  #wanted: (() => void) | null = null;

  constructor(strict: boolean) {
    super();
    this.#strict = strict;
    this.#decompress = new Decompress((data) => {
      if (data.length === 0) return;
      this.#decoded += data.length;
      this.#out.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    });
  }

  override _read(): void {
    const wanted = this.#wanted;
    this.#wanted = null;
    wanted?.();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.#decode(chunk).then(() => callback(), callback);
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.#end().then(() => {
      this.push(null);
      callback();
    }, callback);
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this._read();
    callback(err);
  }

  async #decode(chunk: Uint8Array): Promise<void> {
    let start = 0;
    for (const end of this.#framing.scan(chunk)) {
      if (end.work > WINDOW_WORK_FREE_BYTES + WINDOW_WORK_PER_DECODED_BYTE * this.#decoded) {
        throw new ZstdDecodeError('ZSTD_TOO_COSTLY', `many small blocks under a large window, ${end.work} bytes of window work for ${this.#decoded} bytes decoded`);
      }
      this.#push(chunk.subarray(start, end.offset), false);
      start = end.offset;
      await this.#flush();
      if (this.destroyed) return;
    }
    if (start < chunk.length) this.#push(chunk.subarray(start), false);
    await this.#flush();
  }

  async #end(): Promise<void> {
    if (this.#framing.complete) {
      // fzstd holds a frame's first 17 bytes until more come: a tiny last frame is decoded on the final push.
      this.#push(new Uint8Array(0), true);
    } else if (this.#strict) {
      throw new ZstdDecodeError('ZSTD_TRUNCATED', 'the zstd stream ended inside a frame');
    } else {
      // What was decoded up to the cut is kept, as with a cut gzip stream; fzstd may still hold a whole block.
      try {
        this.#decompress.push(new Uint8Array(0), true);
      } catch {
        // The cut frame's end.
      }
    }
    await this.#flush();
  }

  #push(piece: Uint8Array, final: boolean): void {
    try {
      this.#decompress.push(piece, final);
    } catch (err) {
      // fzstd's own errors carry a numeric code; on some malformed input it fails with a TypeError or RangeError instead.
      throw new ZstdDecodeError('ZSTD_CORRUPT', `invalid zstd data: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Hands the decoded blocks to the reader, waiting while it has enough. */
  async #flush(): Promise<void> {
    for (const block of this.#out.splice(0)) {
      if (this.destroyed) return;
      if (!this.push(block)) await new Promise<void>((resolve) => (this.#wanted = resolve));
    }
  }
}
