import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants as zlib } from 'node:zlib';
import type { Redis } from 'ioredis';
import { InvalidUrlError, isCertificateError, isExitError, isUrlPolicyError, silentLogger, systemClock, type Clock, type Logger, type RobotsPolicy, type RobotsRead, type RobotsVerdict } from '@crawler/core';
import { hashTaggedPrefix } from '../redis/run-script.js';
import { compileRobots, rulesFromFetch, type CompiledRobots, type RobotsBrowserNeeded, type RobotsFetchResult, type RobotsRules, type RobotsUnreachable } from './robots-rules.js';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/**
 * Cached rules longer than this are stored brotli-compressed, behind a NUL byte no JSON starts with. A fleet over
 * millions of origins keeps each one's robots.txt for a day, and the file's text was most of it (robots.txt is
 * repetitive text: a 30 KiB list of Disallow lines took 1.2 KiB); short entries stay JSON. A worker of an older version reads a
 * compressed entry as unreadable, a miss, and fetches robots.txt again.
 */
const COMPRESS_OVER_BYTES = 1024;
const COMPRESSED = 0x00;

async function encodeRules(rules: RobotsRules): Promise<string | Buffer> {
  const json = JSON.stringify(rules);
  if (json.length <= COMPRESS_OVER_BYTES) return json;
  // Quality 5: most of 11's ratio on text for a small part of its time; an entry is written once a day per origin.
  const packed = await compress(Buffer.from(json), { params: { [zlib.BROTLI_PARAM_QUALITY]: 5 } });
  return Buffer.concat([Buffer.from([COMPRESSED]), packed]);
}

async function decodeRules(raw: Buffer): Promise<RobotsRules> {
  const json = raw[0] === COMPRESSED ? await decompress(raw.subarray(1)) : raw;
  return JSON.parse(json.toString('utf8')) as RobotsRules;
}

/** What a robots.txt read gives: the response, a read only a browser can make, or unreachable (with why, or null). */
type ReadRobots = (origin: string) => Promise<RobotsFetchResult | RobotsBrowserNeeded | RobotsUnreachable | null>;

export interface RobotsCacheOptions {
  /** The Redis client; shared with the app, never closed here. */
  redis: Redis;
  /** Key prefix (hash-tagged like the gate's). @defaultValue '{crawler:robots}:' */
  prefix?: string;
  /**
   * Fetch `${origin}/robots.txt` (following redirects); resolve null when unreachable. Injected: the pipeline passes a
   * fetcher. A thrown URL-policy error (core ERROR_POLICY `refusesUrl`) refuses the origin: check() rejects with it, uncached.
   * `{ browser }` when plain HTTP cannot read it and a browser may (cached like an outage, until a browser has: checkInBrowser).
   */
  fetchRobots: ReadRobots;
  /** Our product token, matched against User-agent lines. */
  userAgent: string;
  /** How long a fetched robots.txt is trusted, in milliseconds. @defaultValue 86400000 (24 h, RFC 9309 §2.4) */
  ttlMs?: number;
  /** How long a 5xx/unreachable "disallow all" is kept before asking again, in milliseconds. @defaultValue 600000 */
  unreachableTtlMs?: number;
  /** Upper bound on a honoured Crawl-delay, in milliseconds. @defaultValue 60000 */
  maxCrawlDelayMs?: number;
  /** When false every URL is allowed and nothing is fetched (robots.txt switched off). @defaultValue true */
  enabled?: boolean;
  /** Called once per fresh fetch that carries a Crawl-delay: wire it to `gate.raiseMinDelay(domain, delayMs, ttlMs)`. */
  onCrawlDelay?: (domain: string, delayMs: number, ttlMs: number) => void | Promise<void>;
  /** How long one worker may hold the fetch lock of an origin, in milliseconds. @defaultValue 15000 */
  lockMs?: number;
  /** Origins kept parsed in this process. @defaultValue 1000 */
  memoryEntries?: number;
  /** Time source for expiry. @defaultValue systemClock */
  clock?: Clock;
  /** @defaultValue silentLogger */
  logger?: Logger;
}

const HYGIENE_MS = 60_000;
const LOCK_POLL_MS = 50;

/**
 * robots.txt per origin, fetched once for the whole fleet and cached in Redis with expiry. A short Redis lock
 * makes concurrent workers wait for one fetch instead of all asking the site; each process also keeps recently
 * used origins parsed in memory, so a check on a warm origin costs no round trip.
 */
export class RobotsCache implements RobotsPolicy {
  readonly #o: Required<Omit<RobotsCacheOptions, 'onCrawlDelay'>> & Pick<RobotsCacheOptions, 'onCrawlDelay'>;
  readonly #prefix: string;
  readonly #memory = new Map<string, CompiledRobots>();
  readonly #inflight = new Map<string, Promise<CompiledRobots>>();

  constructor(options: RobotsCacheOptions) {
    if (!options.userAgent) throw new TypeError('RobotsCache needs a userAgent');
    this.#o = {
      prefix: '{crawler:robots}:',
      ttlMs: 86_400_000,
      unreachableTtlMs: 600_000,
      maxCrawlDelayMs: 60_000,
      enabled: true,
      lockMs: 15_000,
      memoryEntries: 1000,
      clock: systemClock,
      logger: silentLogger,
      // An option passed as undefined means "default", not "unset".
      ...(Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as RobotsCacheOptions),
    };
    this.#prefix = hashTaggedPrefix(this.#o.prefix);
  }

  async check(url: string): Promise<RobotsVerdict> {
    if (!this.#o.enabled) return { allowed: true, crawlDelayMs: null };
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch (cause) {
      throw new InvalidUrlError(`cannot check robots.txt for an unparsable URL`, { url, cause });
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidUrlError(`robots.txt applies to http(s) only, got ${parsed.protocol}`, { url });
    const robots = await this.#robotsFor(parsed.origin, parsed.hostname);
    return robots.verdict(parsed);
  }

  /**
   * check(), but an origin whose cached answer is "only a browser can read it" is read now with `read` (the fetch
   * worker's browser, in the site's context), under the same one-fetcher lock, and the result replaces that answer for
   * the fleet with a plain read's expiry. An origin plain HTTP reads costs what check() does.
   */
  async checkInBrowser(url: string, read: (origin: string) => Promise<RobotsRead>): Promise<RobotsVerdict> {
    const verdict = await this.check(url);
    if (!verdict.browser) return verdict;
    const parsed = new URL(url);
    const origin = parsed.origin;
    let pending = this.#inflight.get(`browser:${origin}`);
    if (!pending) {
      pending = (async () => {
        const rules = await this.#fetchOnce(origin, parsed.hostname, read as ReadRobots);
        const compiled = compileRobots(origin, rules, this.#o.userAgent, this.#o.maxCrawlDelayMs);
        this.#remember(origin, compiled);
        return compiled;
      })().finally(() => this.#inflight.delete(`browser:${origin}`));
      this.#inflight.set(`browser:${origin}`, pending);
    }
    return (await pending).verdict(parsed);
  }

  /** Forget an origin here and in Redis (tests, or after a site owner asks). */
  async invalidate(origin: string): Promise<void> {
    this.#memory.delete(origin);
    await this.#o.redis.del(this.#key('rules', origin));
  }

  async #robotsFor(origin: string, hostname: string): Promise<CompiledRobots> {
    const nowMs = this.#o.clock.now().getTime();
    const cached = this.#memory.get(origin);
    if (cached && cached.rules.expiresAtMs > nowMs) {
      // Re-insert to keep the Map in least-recently-used order for eviction.
      this.#memory.delete(origin);
      this.#memory.set(origin, cached);
      return cached;
    }
    let pending = this.#inflight.get(origin);
    if (!pending) {
      pending = this.#load(origin, hostname).finally(() => this.#inflight.delete(origin));
      this.#inflight.set(origin, pending);
    }
    return pending;
  }

  async #load(origin: string, hostname: string): Promise<CompiledRobots> {
    const rules = (await this.#readRules(origin)) ?? (await this.#fetchOnce(origin, hostname));
    const compiled = compileRobots(origin, rules, this.#o.userAgent, this.#o.maxCrawlDelayMs);
    this.#remember(origin, compiled);
    return compiled;
  }

  async #readRules(origin: string): Promise<RobotsRules | null> {
    const raw = await this.#o.redis.getBuffer(this.#key('rules', origin));
    if (raw === null) return null;
    try {
      const rules = await decodeRules(raw);
      return rules.expiresAtMs > this.#o.clock.now().getTime() ? rules : null;
    } catch {
      return null;
    }
  }

  /** Take the origin's lock and fetch; without it, wait for the holder's result, and fetch ourselves if it never comes. */
  async #fetchOnce(origin: string, hostname: string, read?: ReadRobots): Promise<RobotsRules> {
    const { redis, lockMs } = this.#o;
    const lockKey = this.#key('lock', origin);
    const token = randomUUID();
    const locked = (await redis.set(lockKey, token, 'PX', lockMs, 'NX')) === 'OK';
    if (!locked) {
      const deadline = Date.now() + lockMs;
      while (Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
        const rules = await this.#readRules(origin);
        // A browser read waits for another's answer, not for the plain read's "only a browser can" it is replacing.
        if (rules && !(read && rules.kind === 'browser_only')) return rules;
        if ((await redis.exists(lockKey)) === 0) break;
      }
      this.#o.logger.debug({ origin }, 'robots.txt lock holder gave no result; fetching ourselves');
    }
    try {
      return await this.#fetchAndStore(origin, hostname, read ?? this.#o.fetchRobots);
    } finally {
      if (locked && (await redis.get(lockKey)) === token) await redis.del(lockKey);
    }
  }

  async #fetchAndStore(origin: string, hostname: string, read: ReadRobots): Promise<RobotsRules> {
    let result: RobotsFetchResult | RobotsBrowserNeeded | RobotsUnreachable | null;
    try {
      result = await read(origin);
    } catch (err) {
      // A refused origin (the SSRF guard) is not an unreachable site: caching "disallow all" would report every link
      // as forbidden by robots.txt, and keep doing so after the guard is switched off. Let the refusal through.
      if (isUrlPolicyError(err)) throw err;
      // The proxy it went through failed: that says nothing of the site, and must not be cached as its robots.txt.
      if (isExitError(err)) throw err;
      // A refused certificate is no unreachable site to pause and ask again for hours: the link fails with it, and
      // nothing is cached, so a fixed certificate (or a newly trusted CA) counts at the next link.
      if (isCertificateError(err)) throw err;
      this.#o.logger.warn({ err, origin }, 'robots.txt fetch failed; treating the site as unreachable');
      result = { unreachable: { reason: err instanceof Error ? err.message : String(err) } };
    }
    const nowMs = this.#o.clock.now().getTime();
    const rules = rulesFromFetch(result, nowMs, this.#o.ttlMs, this.#o.unreachableTtlMs);
    await this.#o.redis.set(this.#key('rules', origin), await encodeRules(rules), 'PX', rules.expiresAtMs - nowMs + HYGIENE_MS);
    const compiled = compileRobots(origin, rules, this.#o.userAgent, this.#o.maxCrawlDelayMs);
    if (compiled.crawlDelayMs !== null && this.#o.onCrawlDelay) {
      try {
        await this.#o.onCrawlDelay(hostname, compiled.crawlDelayMs, rules.expiresAtMs - nowMs);
      } catch (err) {
        this.#o.logger.warn({ err, origin }, 'applying robots.txt Crawl-delay failed');
      }
    }
    return rules;
  }

  #remember(origin: string, compiled: CompiledRobots): void {
    this.#memory.delete(origin);
    this.#memory.set(origin, compiled);
    while (this.#memory.size > this.#o.memoryEntries) {
      const oldest = this.#memory.keys().next().value;
      if (oldest === undefined) break;
      this.#memory.delete(oldest);
    }
  }

  #key(kind: string, origin: string): string {
    return `${this.#prefix}${kind}:${origin}`;
  }
}
