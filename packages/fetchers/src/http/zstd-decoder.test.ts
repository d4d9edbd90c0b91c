import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createZstdDecoder, ZSTD_MAX_WINDOW_BYTES, ZstdDecodeError } from './zstd-decoder.js';
import { rawZstdFrame, rleZstdFrame, zstdFrameHeader } from '@crawler/testkit';

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/zstd/${name}`, import.meta.url));
const PAGE_SHA256 = '18f3b8f436061a70b4458007d3a3d263764b1e9f39f06ce5456a8c8648cea71f';
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The body in chunks of `chunkBytes`, through a decoder, all of it. */
async function decode(body: Uint8Array, opts: { chunkBytes?: number; strict?: boolean } = {}): Promise<Buffer> {
  const size = opts.chunkBytes ?? 16 * 1024;
  const chunks = Array.from({ length: Math.ceil(body.length / size) }, (_, i) => body.subarray(i * size, (i + 1) * size));
  const out: Buffer[] = [];
  for await (const c of Readable.from(chunks).pipe(createZstdDecoder(opts.strict))) out.push(c as Buffer);
  return Buffer.concat(out);
}

async function failure(body: Uint8Array, opts: { strict?: boolean } = {}): Promise<ZstdDecodeError> {
  const err = await decode(body, opts).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ZstdDecodeError);
  return err as ZstdDecodeError;
}

describe('zstd decoder', () => {
  it('decodes what the reference encoder writes: compressed blocks, with and without a content size', async () => {
    for (const name of ['page.html.19.zst', 'page.html.w23.zst']) {
      const page = await decode(fixture(name));
      expect([name, page.length, sha256(page)]).toEqual([name, 150_241, PAGE_SHA256]);
    }
  });

  it('decodes whatever the chunks it is given: one byte, 7 bytes, the whole body at once', async () => {
    const body = fixture('page.html.w23.zst');
    for (const chunkBytes of [1, 7, body.length]) expect(sha256(await decode(body, { chunkBytes })), String(chunkBytes)).toBe(PAGE_SHA256);
  });

  it('decodes frames one after another, a skippable frame among them, and frames too small to hold a block', async () => {
    const skippable = Buffer.from([0x5e, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    const body = Buffer.concat([rawZstdFrame(Buffer.from('<p>one')), skippable, fixture('page.html.19.zst'), rawZstdFrame(Buffer.from('</p>')), rawZstdFrame(Buffer.alloc(0))]);
    const out = await decode(body, { chunkBytes: 5 });
    expect([out.subarray(0, 6).toString(), out.subarray(-4).toString(), out.length]).toEqual(['<p>one', '</p>', 6 + 150_241 + 4]);
  });

  it('yields each block as it decodes, so a reader that stops early stops the decoding', async () => {
    // 64 KiB of RLE blocks in one chunk: 2 GiB if decoded whole.
    const bomb = rleZstdFrame(16_384, 128 * 1024);
    const stream = Readable.from([bomb]).pipe(createZstdDecoder());
    const sizes: number[] = [];
    for await (const c of stream) {
      sizes.push((c as Buffer).length);
      if (sizes.length === 8) break;
    }
    expect(sizes).toEqual(Array(8).fill(128 * 1024));
  });

  it('refuses a window past 8 MiB and a dictionary before allocating, as browsers do', async () => {
    const bigWindow = await failure(Buffer.concat([zstdFrameHeader({ windowLog: 24 }), Buffer.from([1, 0, 0])]));
    expect([bigWindow.code, bigWindow.message]).toEqual(['ZSTD_WINDOW_TOO_LARGE', expect.stringContaining(`past the ${ZSTD_MAX_WINDOW_BYTES}`)]);
    // A single-segment frame's window is its content size: 2 GiB claimed in a 9-byte header.
    const bigContent = await failure(Buffer.concat([zstdFrameHeader({ contentSize: 2 ** 31 }), Buffer.from([1, 0, 0])]));
    expect(bigContent.code).toBe('ZSTD_WINDOW_TOO_LARGE');
    expect((await decode(rawZstdFrame(Buffer.from('eight'), { windowLog: 23 }))).toString()).toBe('eight');
    const dictionary = await failure(Buffer.concat([zstdFrameHeader({ windowLog: 20, dictionaryId: 7 }), Buffer.from([1, 0, 0])]));
    expect([dictionary.code, dictionary.message]).toEqual(['ZSTD_CORRUPT', 'zstd frame needs dictionary 7']);
  });

  it('fails bytes that are not zstd: a plain page, a reserved block type, a corrupt compressed block, junk after the frame', async () => {
    expect((await failure(Buffer.from('<!DOCTYPE html><html><body>plain</body></html>'))).message).toBe('not a zstd frame (no zstd magic number)');
    expect((await failure(Buffer.concat([zstdFrameHeader({ windowLog: 20 }), Buffer.from([0x07, 0, 0])]))).code).toBe('ZSTD_CORRUPT');
    const corrupt = Buffer.from(fixture('page.html.19.zst'));
    corrupt.fill(0xff, 20, 60);
    expect((await failure(corrupt)).code).toBe('ZSTD_CORRUPT');
    expect((await failure(Buffer.concat([rawZstdFrame(Buffer.from('<p>ok</p>')), Buffer.from('junk')]))).message).toBe('bytes that are no zstd frame after the last frame');
  });

  it('keeps what it decoded of a cut stream, or fails it when strict (a body only the stream\'s end tells whole)', async () => {
    // Two raw blocks, the second cut: the first is the page up to the cut.
    const body = rawZstdFrame(Buffer.from('<p>first block</p><p>second block</p>'), { blockBytes: 18 });
    const cut = body.subarray(0, body.length - 5);
    expect((await decode(cut)).toString()).toBe('<p>first block</p>');
    expect((await failure(cut, { strict: true })).code).toBe('ZSTD_TRUNCATED');
    // A cut compressed frame: the blocks before the cut.
    const cutPage = await decode(fixture('page.html.19.zst').subarray(0, 12_000));
    expect(cutPage.length).toBeGreaterThan(0);
    expect(sha256(cutPage)).not.toBe(PAGE_SHA256);
    // Cut before the first block ends: nothing, quietly; strict: a failure.
    expect((await decode(body.subarray(0, 10))).length).toBe(0);
    expect((await failure(body.subarray(0, 3), { strict: true })).code).toBe('ZSTD_TRUNCATED');
  });

  it('fails a stream of tiny blocks under a large window, each of which costs fzstd the whole window, before decoding them all', async () => {
    // 16 Ki blocks of one byte under an 8 MiB window: 128 GiB of copying if decoded (1.9 ms a block, measured).
    const err = await failure(rleZstdFrame(16_384, 1, { windowLog: 23 }));
    expect([err.code, err.message]).toEqual(['ZSTD_TOO_COSTLY', expect.stringMatching(/many small blocks/)]);
    // The same blocks under a window of their own size decode.
    expect((await decode(rleZstdFrame(16_384, 1, { windowLog: 10 }))).length).toBe(16_384);
  });
});
