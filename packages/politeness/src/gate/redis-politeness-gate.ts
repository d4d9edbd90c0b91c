import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { silentLogger, type AcquireOptions, type Clock, type DomainPermit, type GateDecision, type Logger, type PolitenessGate } from '@crawler/core';
import { hashTaggedPrefix, runScript } from '../redis/run-script.js';
import { acquireScript, pauseScript, pausedUntilScript, raiseDelayScript, refreshScript, releaseScript } from './gate-scripts.js';

/** Per-domain limits; any field left out falls back to the gate's defaults. */
export interface DomainLimits {
  /** Requests to one domain in flight at once, across the whole fleet. @defaultValue 2 */
  maxConcurrency?: number;
  /** Minimum time between the STARTS of two requests to one domain, in milliseconds. @defaultValue 1000 */
  minDelayMs?: number;
}

export interface RedisPolitenessGateOptions {
  /** The Redis client; shared with the app, never closed by the gate. */
  redis: Redis;
  /** Key prefix; wrapped in a `{hash tag}` when it has none so all keys share one Cluster slot. @defaultValue '{crawler:polite}:' */
  prefix?: string;
  /** Limits for every domain without an override. @defaultValue { maxConcurrency: 2, minDelayMs: 1000 } */
  defaults?: DomainLimits;
  /** Limits per domain (lower-case host name), merged over the defaults. @defaultValue {} */
  overrides?: Record<string, DomainLimits>;
  /**
   * Time source. Left out, the gate uses Redis server TIME so every machine shares one clock (recommended for a fleet);
   * given, every decision uses it instead (tests, simulations with a ManualClock). Pause instants are epoch ms in the
   * same time base either way.
   */
  clock?: Clock;
  /** How long a granted slot lives without a heartbeat, in milliseconds: a SIGKILLed holder frees its slot after this. @defaultValue 60000 */
  slotTtlMs?: number;
  /** How often a live permit pushes its slot's expiry forward, in milliseconds. @defaultValue slotTtlMs / 3 */
  heartbeatMs?: number;
  /**
   * Retry hint when all slots are taken and no better estimate exists, in milliseconds. Normally the hint is when
   * the oldest holder should finish (its start plus the domain's average hold time); this poll is used for a
   * domain with no history yet or an overdue holder, capped by the earliest slot expiry. @defaultValue 250
   */
  concurrencyRetryMs?: number;
  /** Logger for heartbeat failures. @defaultValue silentLogger */
  logger?: Logger;
}

/** A granted slot; `grantedAtMs` is the gate's time base at the grant (useful to audit start gaps). */
export interface RedisDomainPermit extends DomainPermit {
  readonly domain: string;
  readonly grantedAtMs: number;
}

/** {@link GateDecision} with the richer permit this gate hands out. */
export type RedisGateDecision = Exclude<GateDecision, { granted: true }> | { granted: true; permit: RedisDomainPermit };

// Key expiries are only hygiene (values are compared by instant); one minute of slack covers clock jitter.
const HYGIENE_MS = 60_000;
/**
 * How long a domain's average hold time outlives its last request. It paces the domain's queued waiters, whose
 * requests refresh it; a domain idle for an hour starts again from the concurrency poll.
 */
const HOLD_MEMORY_MS = 3_600_000;
const DAY_MS = 86_400_000;

function checkLimits(limits: DomainLimits, where: string): void {
  const { maxConcurrency, minDelayMs } = limits;
  if (maxConcurrency !== undefined && !(Number.isInteger(maxConcurrency) && maxConcurrency >= 1)) {
    throw new TypeError(`${where}.maxConcurrency must be an integer >= 1, got ${maxConcurrency}`);
  }
  if (minDelayMs !== undefined && !(Number.isFinite(minDelayMs) && minDelayMs >= 0)) {
    throw new TypeError(`${where}.minDelayMs must be a number >= 0, got ${minDelayMs}`);
  }
}

/**
 * Fleet-wide politeness over Redis: each acquire is one atomic Lua script that checks the domain's pause, its
 * minimum delay between request starts (the larger of the configured delay and a robots.txt Crawl-delay), and its
 * concurrency slots. Slots are sorted-set members scored by expiry, refreshed by a heartbeat while held, so a
 * killed worker's slot frees itself after `slotTtlMs`.
 */
export class RedisPolitenessGate implements PolitenessGate {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #defaults: Required<DomainLimits>;
  readonly #overrides: Map<string, Required<DomainLimits>>;
  readonly #clock?: Clock;
  readonly #slotTtlMs: number;
  readonly #heartbeatMs: number;
  readonly #concurrencyRetryMs: number;
  readonly #logger: Logger;

  constructor(options: RedisPolitenessGateOptions) {
    this.#redis = options.redis;
    this.#prefix = hashTaggedPrefix(options.prefix ?? '{crawler:polite}:');
    checkLimits(options.defaults ?? {}, 'defaults');
    this.#defaults = { maxConcurrency: options.defaults?.maxConcurrency ?? 2, minDelayMs: options.defaults?.minDelayMs ?? 1000 };
    this.#overrides = new Map();
    for (const [domain, limits] of Object.entries(options.overrides ?? {})) {
      checkLimits(limits, `overrides[${domain}]`);
      this.#overrides.set(domain.toLowerCase(), { ...this.#defaults, ...limits });
    }
    this.#clock = options.clock;
    this.#slotTtlMs = options.slotTtlMs ?? 60_000;
    if (!(this.#slotTtlMs >= 100)) throw new TypeError(`slotTtlMs must be >= 100, got ${this.#slotTtlMs}`);
    this.#heartbeatMs = options.heartbeatMs ?? Math.floor(this.#slotTtlMs / 3);
    this.#concurrencyRetryMs = options.concurrencyRetryMs ?? 250;
    this.#logger = options.logger ?? silentLogger;
  }

  /** The limits that apply to `domain`. */
  limitsFor(domain: string): Required<DomainLimits> {
    return this.#overrides.get(normalizeDomain(domain)) ?? this.#defaults;
  }

  async acquire(domain: string, options: AcquireOptions = {}): Promise<RedisGateDecision> {
    const d = normalizeDomain(domain);
    const limits = this.limitsFor(d);
    const token = randomUUID();
    const keys = [this.#key('slots', d), this.#key('last', d), this.#key('pause', d), this.#key('delay', d), this.#key('starts', d), this.#key('hold', d), this.#key('turn', d)];
    const reply = (await runScript(this.#redis, acquireScript, keys, [
      this.#now(),
      limits.maxConcurrency,
      limits.minDelayMs,
      this.#slotTtlMs,
      token,
      this.#concurrencyRetryMs,
      HYGIENE_MS,
      options.queued ? '1' : '',
    ])) as [number, string, number, number];
    const [granted, reason, retryInMs, nowMs] = reply;
    if (granted === 1) return { granted: true, permit: this.#permit(d, token, nowMs) };
    // Never hand back 0: a caller that re-asks immediately would spin on a slot that frees within the same ms.
    return { granted: false, reason: reason as 'paused' | 'concurrency' | 'delay', retryInMs: Math.max(1, retryInMs) };
  }

  /**
   * Pause `domain` until `untilMs` (epoch ms), extend-only. For operator tools and tests on one machine: workers pause
   * by duration ({@link pauseDomainFor}), so that their clocks' errors do not reach the fleet's pause.
   */
  async pauseDomain(domain: string, untilMs: number, reason: string): Promise<void> {
    await runScript(this.#redis, pauseScript, [this.#key('pause', normalizeDomain(domain))], [this.#now(), Math.ceil(untilMs), reason, HYGIENE_MS, 'until']);
  }

  /**
   * Pause `domain` for `durationMs` from now in the gate's own time base (Redis TIME by default), so a worker whose
   * clock is off does not shorten or stretch the pause. Extend-only like {@link pauseDomain}; returns the pause's
   * end (epoch ms), which may be later than asked when a longer pause was already in place.
   */
  async pauseDomainFor(domain: string, durationMs: number, reason: string): Promise<number> {
    if (!(durationMs > 0)) throw new TypeError(`pauseDomainFor needs durationMs > 0, got ${durationMs}`);
    const reply = await runScript(this.#redis, pauseScript, [this.#key('pause', normalizeDomain(domain))], [this.#now(), Math.ceil(durationMs), reason, HYGIENE_MS, 'for']);
    return Number(reply);
  }

  async domainPausedUntil(domain: string): Promise<number | null> {
    return (await this.domainPause(domain))?.untilMs ?? null;
  }

  /** The active pause of `domain` with its reason, or null. */
  async domainPause(domain: string): Promise<{ untilMs: number; reason: string } | null> {
    const reply = (await runScript(this.#redis, pausedUntilScript, [this.#key('pause', normalizeDomain(domain))], [this.#now()])) as [number, string] | [];
    return reply.length === 2 ? { untilMs: reply[0], reason: reply[1] } : null;
  }

  /**
   * Every domain paused right now, fleet-wide, with its reason and end (epoch ms), soonest end last. Walks the pause
   * keys with SCAN (never KEYS), so a large keyspace is not blocked; on a Redis Cluster every master is walked, as a
   * SCAN sees only the keys of the node it reaches.
   */
  async listPauses(): Promise<Array<{ domain: string; untilMs: number; reason: string }>> {
    const match = `${this.#prefix.replace(/[*?[\]\\]/g, '\\$&')}pause:*`;
    const out: Array<{ domain: string; untilMs: number; reason: string }> = [];
    for (const node of masterNodes(this.#redis)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 500);
        cursor = next;
        for (const key of keys) {
          const domain = key.slice(this.#prefix.length + 'pause:'.length);
          const pause = await this.domainPause(domain);
          if (pause) out.push({ domain, ...pause });
        }
      } while (cursor !== '0');
    }
    return out.sort((a, b) => b.untilMs - a.untilMs || a.domain.localeCompare(b.domain));
  }

  /** End `domain`'s pause now (an operator's decision: the site is back, or the pause was a mistake). True when one was active. */
  async liftPause(domain: string): Promise<boolean> {
    const active = await this.domainPause(domain);
    await this.#redis.del(this.#key('pause', normalizeDomain(domain)));
    return active !== null;
  }

  /**
   * Raise `domain`'s minimum delay to `delayMs` for `ttlMs` (robots.txt Crawl-delay). The effective delay is the
   * larger of this and the configured one, so it never lowers politeness; a later call replaces the earlier one.
   */
  async raiseMinDelay(domain: string, delayMs: number, ttlMs: number = DAY_MS): Promise<void> {
    if (!(delayMs >= 0) || !(ttlMs > 0)) throw new TypeError(`raiseMinDelay needs delayMs >= 0 and ttlMs > 0, got ${delayMs}, ${ttlMs}`);
    await runScript(this.#redis, raiseDelayScript, [this.#key('delay', normalizeDomain(domain))], [this.#now(), Math.ceil(delayMs), Math.ceil(ttlMs), HYGIENE_MS]);
  }

  /** How many slots of `domain` are held right now (expired ones excluded). */
  async heldSlots(domain: string): Promise<number> {
    const now = this.#clock ? this.#clock.now().getTime() : await this.#redisNowMs();
    return this.#redis.zcount(this.#key('slots', normalizeDomain(domain)), `(${now}`, '+inf');
  }

  #permit(domain: string, token: string, grantedAtMs: number): RedisDomainPermit {
    const slotsKey = this.#key('slots', domain);
    let released = false;
    const heartbeat = setInterval(() => {
      runScript(this.#redis, refreshScript, [slotsKey], [this.#now(), token, this.#slotTtlMs, HYGIENE_MS]).catch((err: unknown) =>
        this.#logger.warn({ err, domain }, 'politeness slot heartbeat failed'),
      );
    }, this.#heartbeatMs);
    // A held permit must not keep a shutting-down process alive.
    heartbeat.unref();
    return {
      domain,
      grantedAtMs,
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(heartbeat);
        await runScript(this.#redis, releaseScript, [slotsKey, this.#key('starts', domain), this.#key('hold', domain)], [this.#now(), token, HYGIENE_MS, HOLD_MEMORY_MS]);
      },
    };
  }

  #key(kind: string, domain: string): string {
    return `${this.#prefix}${kind}:${domain}`;
  }

  #now(): string {
    return this.#clock ? String(this.#clock.now().getTime()) : '';
  }

  async #redisNowMs(): Promise<number> {
    const [s, us] = await this.#redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  }
}

/** The clients that hold the whole keyspace: each master of an ioredis Cluster, or the one server. */
function masterNodes(redis: Redis): Redis[] {
  const cluster = redis as unknown as { isCluster?: boolean; nodes?: (role: 'master') => Redis[] };
  return cluster.isCluster === true && cluster.nodes ? cluster.nodes('master') : [redis];
}

/** Domains are compared case-insensitively and without a trailing dot. */
export function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, '');
}
