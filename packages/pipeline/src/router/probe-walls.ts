import type { Redis } from 'ioredis';
import type { Clock, Logger } from '@crawler/core';
import { DecisionCache } from './decision-cache.js';

/** What a probe found at a domain's wall: the tool it chose instead of plain HTTP. */
export interface WallSighting {
  fetcher: string;
  /** The probe's reason (blocked_captcha, blocked_403, ...). */
  reason: string;
  /** Real time (ms) of the sighting, comparable with the fetch workers' refusals (blocked-arms.ts); absent in older keys. */
  atMs?: number;
}

/** Where the fleet shares its sightings: a key per domain under the queue prefix, expiring with the memory. */
export interface ProbeWallsShared {
  redis: Redis;
  prefix: string;
  logger?: Logger;
}

/**
 * The router's memory of bot walls its probes met, per domain. A wall stands in front of a whole site: once one probe
 * of a domain was challenged or refused, probing its other pages only shows the wall the same thing again (each probe
 * is a refused request in the site's log) until a browser result reaches the attempt log, which the domain memory
 * then reads. Until then, or for `ttlMs`, the domain's URLs that would be probed go straight to the tool the probe
 * chose. With `shared`, a sighting is also written to Redis, so every router of the fleet stops probing the domain,
 * not only the one whose probe met the wall; a Redis error only costs a probe. Expiry follows both real time and the
 * injected clock (simulations jump days).
 */
export class ProbeWalls {
  /** This process's sightings, by domain: bounded, expiring by real time and by the injected clock. */
  readonly #seen: DecisionCache<WallSighting>;

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
    private readonly shared?: ProbeWallsShared,
  ) {
    this.#seen = new DecisionCache<WallSighting>(ttlMs, clock);
  }

  /** Remember that a probe of `domain` met a wall and chose `fetcher`. */
  async record(domain: string, fetcher: string, reason: string): Promise<void> {
    if (!(this.ttlMs > 0)) return;
    const clockAt = this.clock.now().getTime();
    const atMs = Date.now();
    this.#seen.set(domain, domain, { fetcher, reason, atMs }, clockAt);
    if (!this.shared) return;
    try {
      await this.shared.redis.set(this.#key(domain), JSON.stringify({ fetcher, reason, clockAt, atMs }), 'PX', this.ttlMs);
    } catch (err) {
      this.shared.logger?.warn({ err, domain }, 'could not share a probe wall sighting; other routers may probe the domain');
    }
  }

  /** The domain's wall sighting while it is fresh, from this process or (shared) the fleet, else null. */
  async recent(domain: string): Promise<WallSighting | null> {
    if (!(this.ttlMs > 0)) return null;
    const local = this.#seen.get(domain);
    if (local) return local;
    if (!this.shared) return null;
    let raw: string | null;
    try {
      raw = await this.shared.redis.get(this.#key(domain));
    } catch (err) {
      this.shared.logger?.warn({ err, domain }, 'could not read the fleet\'s probe wall sightings; probing');
      return null;
    }
    const got = parseSighting(raw);
    // Redis expires the key in real time; the injected clock is checked here.
    if (!got || Math.abs(this.clock.now().getTime() - got.clockAt) >= this.ttlMs) return null;
    const sighting = { fetcher: got.fetcher, reason: got.reason, ...(got.atMs !== undefined ? { atMs: got.atMs } : {}) };
    this.#seen.set(domain, domain, sighting, got.clockAt);
    return sighting;
  }

  #key(domain: string): string {
    return `${this.shared!.prefix}:probe-wall:${domain}`;
  }
}

/** A stored sighting, or null for anything else (a key written by hand, an older format). */
function parseSighting(raw: string | null): (WallSighting & { clockAt: number }) | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as Record<string, unknown>;
    if (typeof v.fetcher === 'string' && v.fetcher !== '' && typeof v.reason === 'string' && typeof v.clockAt === 'number') {
      return { fetcher: v.fetcher, reason: v.reason, clockAt: v.clockAt, ...(typeof v.atMs === 'number' ? { atMs: v.atMs } : {}) };
    }
  } catch {
    // not JSON: ignored
  }
  return null;
}
