import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { DIRECT_TIER, maskProxyUrl, type Clock, type ExitTier, type Logger } from '@crawler/core';
import type { FetchExit } from '@crawler/fetchers';

/** Where the fleet shares which proxies are down: a key per proxy under the queue prefix, expiring with the verdict. */
export interface ExitPoolShared {
  redis: Pick<Redis, 'set' | 'mget'>;
  prefix: string;
}

/**
 * The exits of the configured tiers and their health. A proxy URL that refused a connection, answered 407 or timed
 * out is left out for `unhealthyMs`, by every worker of the fleet when `shared` (a Redis key per proxy, named by a
 * hash of its URL so no credential reaches Redis); the tier's other URLs take its requests meanwhile, in turn. A Redis
 * error only costs the fleet-wide view: this process's own verdicts still hold.
 */
export class ExitPool {
  readonly #tiers: Map<string, ExitTier>;
  /** This process's verdicts: proxy URL → clock time until which it is left out. */
  readonly #down = new Map<string, number>();
  readonly #turn = new Map<string, number>();

  constructor(
    tiers: readonly ExitTier[],
    private readonly opts: { unhealthyMs: number; clock: Clock; shared?: ExitPoolShared; logger?: Logger },
  ) {
    this.#tiers = new Map(tiers.map((t) => [t.name, t]));
  }

  /** The configured tiers, cheapest first. */
  get tiers(): ExitTier[] {
    return [...this.#tiers.values()].sort((a, b) => a.cost - b.cost);
  }

  /** Whether `tier` is configured. */
  has(tier: string): boolean {
    return this.#tiers.has(tier);
  }

  /**
   * An exit of `tier` for one request: `direct` is the worker itself; a proxied tier gives its next healthy URL not in
   * `exclude`, or null when every URL is down (or the tier is not configured).
   */
  async pick(tier: string, exclude: ReadonlySet<string> = new Set()): Promise<FetchExit | null> {
    if (tier === DIRECT_TIER) return this.#tiers.has(DIRECT_TIER) ? { tier, proxyUrl: null } : null;
    const t = this.#tiers.get(tier);
    if (!t) return null;
    const now = this.opts.clock.now().getTime();
    const candidates = t.urls.filter((u) => !exclude.has(u) && !((this.#down.get(u) ?? 0) > now));
    if (candidates.length === 0) return null;
    const fleetDown = await this.#fleetDown(candidates);
    const healthy = candidates.filter((u) => !fleetDown.has(u));
    if (healthy.length === 0) return null;
    const turn = this.#turn.get(tier) ?? 0;
    this.#turn.set(tier, turn + 1);
    return { tier, proxyUrl: healthy[turn % healthy.length]! };
  }

  /** Leave `proxyUrl` out for `unhealthyMs`, here and (shared) fleet-wide. */
  async markUnhealthy(proxyUrl: string, reason: string): Promise<void> {
    const until = this.opts.clock.now().getTime() + this.opts.unhealthyMs;
    this.#down.set(proxyUrl, until);
    this.opts.logger?.warn({ proxy: maskProxyUrl(proxyUrl), reason, unhealthyMs: this.opts.unhealthyMs }, 'proxy unhealthy: failing over to another URL of its tier');
    const shared = this.opts.shared;
    if (!shared) return;
    try {
      await shared.redis.set(this.#key(proxyUrl), String(until), 'PX', this.opts.unhealthyMs);
    } catch (err) {
      this.opts.logger?.warn({ err, proxy: maskProxyUrl(proxyUrl) }, 'could not share a proxy verdict; other workers may still try it');
    }
  }

  async #fleetDown(urls: readonly string[]): Promise<Set<string>> {
    const shared = this.opts.shared;
    if (!shared) return new Set();
    try {
      const got = await shared.redis.mget(...urls.map((u) => this.#key(u)));
      const now = this.opts.clock.now().getTime();
      // Redis expires keys in real time; the injected clock is checked too (simulations jump days).
      return new Set(urls.filter((_, i) => got[i] != null && Number(got[i]) > now));
    } catch (err) {
      this.opts.logger?.warn({ err }, "could not read the fleet's proxy verdicts; using this worker's own");
      return new Set();
    }
  }

  #key(proxyUrl: string): string {
    return `${this.opts.shared!.prefix}:proxy-down:${proxyId(proxyUrl)}`;
  }
}

/** A stable id of a proxy URL that reveals nothing of it (for Redis keys). */
export function proxyId(proxyUrl: string): string {
  return createHash('sha256').update(proxyUrl).digest('hex').slice(0, 16);
}
