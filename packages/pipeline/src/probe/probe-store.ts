import { brotliCompress, brotliDecompress, constants as zlib } from 'node:zlib';
import { promisify } from 'node:util';
import type { Redis } from 'ioredis';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/** A probe response kept for the fetch worker to reuse. */
export interface StoredProbe {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  finalUrl: string;
  contentType: string | null;
  body: Uint8Array;
  /** The body as the probe decoded it (charset applied), or null for binary content. */
  text: string | null;
}

export interface ProbeStoreOptions {
  redis: Redis;
  /** Key prefix; keep it inside the queue's hash tag on a cluster. */
  prefix: string;
  /** Largest compressed size kept; a bigger probe is not stored (the fetch worker requests the page again). */
  maxCompressedBytes: number;
  /** Expiry: a probe never used (crashed router, fetch job lost) disappears on its own. */
  ttlMs: number;
}

/**
 * Probe responses in Redis, brotli-compressed, size-capped and expiring, keyed by link. Memory stays bounded
 * whatever the crawl rate: at most one probe per link in flight, each below the cap, each gone after the TTL.
 */
export class ProbeStore {
  constructor(private readonly opts: ProbeStoreOptions) {}

  /** The key of a link's probe. */
  keyOf(linkId: string): string {
    return `${this.opts.prefix}:probe:${linkId}`;
  }

  /** Store a probe; resolves to its key, or null when it is too big to keep. */
  async save(linkId: string, probe: StoredProbe): Promise<string | null> {
    // The decoded text is kept only when it is not simply the UTF-8 reading of the bytes (another charset).
    const t = probe.text === null ? null : probe.text === Buffer.from(probe.body).toString('utf8') ? true : probe.text;
    const meta = Buffer.from(`${JSON.stringify({ s: probe.status, h: probe.headers, u: probe.finalUrl, c: probe.contentType, t })}\n`);
    // Quality 4: most of brotli's gain on HTML at a fraction of the CPU of the default 11.
    const packed = await compress(Buffer.concat([meta, Buffer.from(probe.body)]), { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } });
    if (packed.length > this.opts.maxCompressedBytes) return null;
    const key = this.keyOf(linkId);
    await this.opts.redis.set(key, packed, 'PX', this.opts.ttlMs);
    return key;
  }

  /** Load a probe by key; null when it expired or never existed. */
  async load(key: string): Promise<StoredProbe | null> {
    const packed = await this.opts.redis.getBuffer(key);
    if (!packed) return null;
    const raw = await decompress(packed);
    const nl = raw.indexOf(0x0a);
    const meta = JSON.parse(raw.subarray(0, nl).toString('utf8')) as { s: number; h: Record<string, string>; u: string; c: string | null; t: string | true | null };
    const body = raw.subarray(nl + 1);
    const text = meta.t === true ? body.toString('utf8') : meta.t;
    return { status: meta.s, headers: meta.h, finalUrl: meta.u, contentType: meta.c, body: new Uint8Array(body), text };
  }

  /** Forget a probe once its link is done with it. */
  async delete(key: string): Promise<void> {
    await this.opts.redis.del(key);
  }
}
