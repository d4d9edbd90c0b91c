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
  /** The charset `text` was decoded from, when the probe decoded bytes (FetchResult.charset). */
  charset?: string;
  /** The encoding a browser read the document in, where the body is its rendered UTF-8 (FetchResult.documentCharset). */
  documentCharset?: string;
  /** The proxy the probe left through, by tier and id (ExitPool.idOf: no credential reaches Redis); absent when direct. */
  exit?: ProbeExit;
}

/** A proxy named without its URL: its tier and the id ExitPool derives from its configured URL. */
export interface ProbeExit {
  tier: string;
  id: string;
}

export interface ProbeStoreOptions {
  redis: Redis;
  /** Key prefix; keep it inside the queue's hash tag on a cluster. */
  prefix: string;
  /** Largest compressed size kept; a bigger probe is not stored (the fetch worker requests the page again). */
  maxCompressedBytes: number;
  /** Expiry: a probe never used (crashed router, fetch job lost) disappears on its own. */
  ttlMs: number;
  /**
   * Total compressed bytes all stored probes may take in Redis (which runs `noeviction`: a full Redis stops the
   * queues). A probe that would pass it is not stored; the fetch worker requests the page again. @defaultValue 268435456
   */
  budgetBytes?: number;
  /** Milliseconds since the epoch, in the time Redis expires keys by (real time, not a simulated clock). @defaultValue Date.now */
  now?: () => number;
}

// Budget bookkeeping in one script, so concurrent routers never both squeeze into the last free bytes. KEYS: the
// probe, the expiry index (zset key → expiry), the size index (hash key → bytes), the total. ARGV: body, ttl ms,
// now ms, budget. Expired entries (Redis dropped the probe itself) give their bytes back first, a bounded number
// per call. Returns 1 when stored, 0 when the budget is full.
const SAVE_SCRIPT = `
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[3], 'LIMIT', 0, 200)
for _, k in ipairs(expired) do
  local size = redis.call('HGET', KEYS[3], k)
  if size then redis.call('DECRBY', KEYS[4], size) end
  redis.call('HDEL', KEYS[3], k)
  redis.call('ZREM', KEYS[2], k)
end
local old = redis.call('HGET', KEYS[3], KEYS[1])
if old then redis.call('DECRBY', KEYS[4], old) end
local size = string.len(ARGV[1])
local total = tonumber(redis.call('GET', KEYS[4]) or '0')
if total + size > tonumber(ARGV[4]) then
  if old then redis.call('HDEL', KEYS[3], KEYS[1]); redis.call('ZREM', KEYS[2], KEYS[1]); redis.call('DEL', KEYS[1]) end
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[2]), KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], size)
redis.call('INCRBY', KEYS[4], size)
return 1`;

// KEYS: the probe, the expiry index, the size index, the total.
const DELETE_SCRIPT = `
redis.call('DEL', KEYS[1])
local size = redis.call('HGET', KEYS[3], KEYS[1])
if size then redis.call('DECRBY', KEYS[4], size) end
redis.call('HDEL', KEYS[3], KEYS[1])
redis.call('ZREM', KEYS[2], KEYS[1])
return 0`;

/**
 * Probe responses in Redis, brotli-compressed, size-capped and expiring, keyed by link. Memory stays bounded
 * whatever the crawl rate: each probe below the cap, each gone after the TTL, and all of them together below the
 * budget (a million queued links must not fill a Redis that may not evict).
 */
export class ProbeStore {
  readonly #budgetBytes: number;
  readonly #now: () => number;

  constructor(private readonly opts: ProbeStoreOptions) {
    this.#budgetBytes = opts.budgetBytes ?? 256 * 1024 * 1024;
    this.#now = opts.now ?? Date.now;
  }

  #budgetKeys(key: string): [string, string, string, string] {
    const base = `${this.opts.prefix}:probe-budget`;
    return [key, `${base}:expiry`, `${base}:sizes`, `${base}:total`];
  }

  /** Compressed bytes the stored probes take now, by the store's own count. */
  async usedBytes(): Promise<number> {
    return Number((await this.opts.redis.get(`${this.opts.prefix}:probe-budget:total`)) ?? 0);
  }

  /** The key of a link's probe. */
  keyOf(linkId: string): string {
    return `${this.opts.prefix}:probe:${linkId}`;
  }

  /** Store a probe; resolves to its key, or null when it is too big to keep or the store's budget is spent. */
  async save(linkId: string, probe: StoredProbe): Promise<string | null> {
    // The decoded text is kept only when it is not simply the UTF-8 reading of the bytes (another charset).
    // The body's bytes are read in place: a copy of each (the compare, the join) was up to 10 MiB apiece.
    const bytes = Buffer.from(probe.body.buffer, probe.body.byteOffset, probe.body.byteLength);
    const t = probe.text === null ? null : probe.text === bytes.toString('utf8') ? true : probe.text;
    const meta = Buffer.from(`${JSON.stringify({ s: probe.status, h: probe.headers, u: probe.finalUrl, c: probe.contentType, t, ...(probe.exit ? { x: probe.exit } : {}), ...(probe.charset ? { e: probe.charset } : {}), ...(probe.documentCharset ? { d: probe.documentCharset } : {}) })}\n`);
    // Quality 1, as stored pages: the body lives here only until its fetch job reads it. Measured on the synthetic
    // articles (36 KiB): q1 0.20 ms and 10.9 KiB per page against q4's 0.63-0.68 ms and 10.3 KiB (bench README,
    // session 7), where the default 11 costs far more.
    const body = Buffer.concat([meta, bytes]);
    const packed = await compress(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 1, [zlib.BROTLI_PARAM_SIZE_HINT]: body.byteLength } });
    if (packed.length > this.opts.maxCompressedBytes) return null;
    const key = this.keyOf(linkId);
    const stored = await this.opts.redis.eval(SAVE_SCRIPT, 4, ...this.#budgetKeys(key), packed, this.opts.ttlMs, this.#now(), this.#budgetBytes);
    return stored === 1 ? key : null;
  }

  /** Load a probe by key; null when it expired or never existed. */
  async load(key: string): Promise<StoredProbe | null> {
    const packed = await this.opts.redis.getBuffer(key);
    if (!packed) return null;
    const raw = await decompress(packed);
    const nl = raw.indexOf(0x0a);
    const meta = JSON.parse(raw.subarray(0, nl).toString('utf8')) as { s: number; h: Record<string, string>; u: string; c: string | null; t: string | true | null; x?: ProbeExit; e?: string; d?: string };
    const body = raw.subarray(nl + 1);
    const text = meta.t === true ? body.toString('utf8') : meta.t;
    return { status: meta.s, headers: meta.h, finalUrl: meta.u, contentType: meta.c, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), text, ...(meta.x ? { exit: meta.x } : {}), ...(meta.e ? { charset: meta.e } : {}), ...(meta.d ? { documentCharset: meta.d } : {}) };
  }

  /** Forget a probe once its link is done with it. */
  async delete(key: string): Promise<void> {
    await this.opts.redis.eval(DELETE_SCRIPT, 4, ...this.#budgetKeys(key));
  }
}
