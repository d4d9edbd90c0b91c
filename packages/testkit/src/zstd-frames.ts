/**
 * zstd frames built by hand (Node 20's zlib has no zstd encoder): raw and RLE blocks, and headers that claim what a
 * test needs (a window, a content size, a dictionary). Real compressed blocks come from fixtures of the reference encoder.
 */

const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const MAX_BLOCK_BYTES = 128 * 1024;

/** What a hand-built frame header says. */
export interface ZstdHeaderOptions {
  /** A window of 2^windowLog bytes in a window descriptor (10 to 41). Ignored when `contentSize` is given. */
  windowLog?: number;
  /** A single-segment frame of this content size, which is then also its window. */
  contentSize?: number;
  /** A dictionary ID (1 to 2^32-1), which a `zstd` content coding has no dictionary for. */
  dictionaryId?: number;
  /** Whether the frame says a 4-byte checksum follows its last block. @defaultValue false */
  checksum?: boolean;
}

/** A zstd frame header: magic number, descriptor, window or content size, dictionary ID. */
export function zstdFrameHeader(opts: ZstdHeaderOptions = {}): Buffer {
  const dict = opts.dictionaryId ?? 0;
  const dictBytes = dict === 0 ? 0 : dict < 256 ? 1 : dict < 65_536 ? 2 : 4;
  const dictFlag = [0, 1, 2, 0, 3][dictBytes]!;
  const checksum = opts.checksum ? 0x04 : 0;
  const le = (value: number, bytes: number) => Array.from({ length: bytes }, (_, i) => Math.floor(value / 256 ** i) % 256);
  if (opts.contentSize !== undefined) {
    // Single segment: the smallest content-size field that holds the size (2 bytes hold size - 256).
    const size = opts.contentSize;
    const [flag, bytes, stored] = size < 256 ? [0, 1, size] : size < 65_536 + 256 ? [1, 2, size - 256] : size < 2 ** 32 ? [2, 4, size] : [3, 8, size];
    return Buffer.from([...MAGIC, (flag << 6) | 0x20 | checksum | dictFlag, ...le(dict, dictBytes), ...le(stored, bytes)]);
  }
  const windowLog = opts.windowLog ?? 17;
  return Buffer.from([...MAGIC, checksum | dictFlag, (windowLog - 10) << 3, ...le(dict, dictBytes)]);
}

function blockHeader(type: 0 | 1, size: number, last: boolean): number[] {
  const bits = (size << 3) | (type << 1) | (last ? 1 : 0);
  return [bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff];
}

/**
 * A zstd frame of raw (stored) blocks of `content`, `blockBytes` each (at most 128 KiB); a single-segment frame with
 * its content size unless `windowLog` is given. `checksum`: the frame ends with 4 zero bytes where the content's
 * XXH64 goes, which fzstd (and so the crawler) does not check and the reference decoder would refuse.
 */
export function rawZstdFrame(content: Uint8Array, opts: { blockBytes?: number; windowLog?: number; checksum?: boolean } = {}): Buffer {
  const blockBytes = Math.min(opts.blockBytes ?? MAX_BLOCK_BYTES, MAX_BLOCK_BYTES);
  const checksum = opts.checksum === true;
  const parts: Uint8Array[] = [zstdFrameHeader(opts.windowLog !== undefined ? { windowLog: opts.windowLog, checksum } : { contentSize: content.length, checksum })];
  let at = 0;
  do {
    const block = content.subarray(at, at + blockBytes);
    at += block.length;
    parts.push(Buffer.from(blockHeader(0, block.length, at >= content.length)), block);
  } while (at < content.length);
  if (checksum) parts.push(Buffer.alloc(4));
  return Buffer.concat(parts);
}

/**
 * A zstd frame of `blocks` RLE blocks, each `blockBytes` copies of one byte in 4 bytes on the wire: 16 Ki blocks of
 * 128 KiB are 64 KiB that decode to 2 GiB. The window is `windowLog` (default 2^17, one block).
 */
export function rleZstdFrame(blocks: number, blockBytes: number, opts: { windowLog?: number; byte?: number } = {}): Buffer {
  const header = zstdFrameHeader({ windowLog: opts.windowLog ?? 17 });
  const body = Buffer.alloc(blocks * 4);
  for (let i = 0; i < blocks; i++) body.set([...blockHeader(1, blockBytes, i === blocks - 1), opts.byte ?? 0x41], i * 4);
  return Buffer.concat([header, body]);
}
