import type { Redis } from 'ioredis';
import type { Logger } from '@crawler/core';

/**
 * A site refused one arm (fetcher and exit tier) of the fleet: when, why, and the climb the retry policy chose for the
 * link that was refused (the arm to try next, the arm refused).
 */
export interface ArmBlock {
  /** Real time (ms) of the refusal: compared with BullMQ's job timestamps, which are real time too. */
  atMs: number;
  errorType: string;
  reason: string;
  nextFetcher?: string;
  blockedFetcher?: string;
}

/** How long a refusal is remembered: longer than any job waits in a queue or behind a pause in practice. @defaultValue 1 h */
export const BLOCKED_ARM_MEMORY_MS = 60 * 60_000;

/**
 * The fleet's memory of the arms sites refused, per domain and arm, in Redis under the queue prefix. A burst of a new
 * site's links is routed before the first refusal is known: every link routed to the same arm would otherwise make
 * its own refused request once the site's pause ends, each one a block in the site's log and a longer pause. A fetch
 * job routed before its arm was refused at that site climbs as the refused link did, without a request. Written only
 * on a block, read only by jobs that waited (a politeness wait, a queue backlog): the hot path pays nothing. A Redis
 * error costs at most the request the memory would have saved.
 */
export class BlockedArms {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #logger?: Logger;

  constructor(o: { redis: Redis; prefix: string; ttlMs?: number; logger?: Logger }) {
    this.#redis = o.redis;
    this.#prefix = o.prefix;
    this.#ttlMs = o.ttlMs ?? BLOCKED_ARM_MEMORY_MS;
    this.#logger = o.logger;
  }

  /** Remember that `domain` refused `arm` (core armKey). */
  async record(domain: string, arm: string, block: ArmBlock): Promise<void> {
    try {
      await this.#redis.set(this.#key(domain, arm), JSON.stringify(block), 'PX', this.#ttlMs);
    } catch (err) {
      this.#logger?.warn({ err, domain, arm }, 'could not share a refused arm; jobs already routed to it may be refused too');
    }
  }

  /** The latest refusal of `arm` by `domain` while remembered, else null. */
  async latest(domain: string, arm: string): Promise<ArmBlock | null> {
    let raw: string | null;
    try {
      raw = await this.#redis.get(this.#key(domain, arm));
    } catch (err) {
      this.#logger?.warn({ err, domain, arm }, 'could not read the refused arms; fetching');
      return null;
    }
    return parseBlock(raw);
  }

  #key(domain: string, arm: string): string {
    return `${this.#prefix}:blocked-arm:${domain}:${arm}`;
  }
}

/** A stored refusal, or null for anything else (a key written by hand, another format). */
function parseBlock(raw: string | null): ArmBlock | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as Record<string, unknown>;
    if (typeof v.atMs !== 'number' || typeof v.errorType !== 'string' || typeof v.reason !== 'string') return null;
    return {
      atMs: v.atMs, errorType: v.errorType, reason: v.reason,
      ...(typeof v.nextFetcher === 'string' ? { nextFetcher: v.nextFetcher } : {}),
      ...(typeof v.blockedFetcher === 'string' ? { blockedFetcher: v.blockedFetcher } : {}),
    };
  } catch {
    return null;
  }
}
