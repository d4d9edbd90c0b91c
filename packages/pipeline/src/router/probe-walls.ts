import type { Clock } from '@crawler/core';

/** What a probe found at a domain's wall: the tool it chose instead of plain HTTP, and when. */
export interface WallSighting {
  fetcher: string;
  /** The probe's reason (blocked_captcha, blocked_403, ...). */
  reason: string;
  at: number;
}

/**
 * The router's memory of bot walls its probes met, per domain. A wall stands in front of a whole site: once one probe
 * of a domain was challenged or refused, probing its other pages only shows the wall the same thing again (each probe
 * is a refused request in the site's log) until a browser result reaches the attempt log, which the domain memory
 * then reads. Until then, or for `ttlMs`, the domain's URLs that would be probed go straight to the tool the probe
 * chose. In-process: each router process probes a walled domain at most a few times (those in flight together).
 * Expiry follows both real time and the injected clock (simulations jump days).
 */
export class ProbeWalls {
  readonly #seen = new Map<string, WallSighting & { clockAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
    private readonly maxDomains = 10_000,
  ) {}

  /** Remember that a probe of `domain` met a wall and chose `fetcher`. */
  record(domain: string, fetcher: string, reason: string): void {
    if (!(this.ttlMs > 0)) return;
    this.#seen.delete(domain);
    if (this.#seen.size >= this.maxDomains) this.#seen.delete(this.#seen.keys().next().value as string);
    this.#seen.set(domain, { fetcher, reason, at: performance.now(), clockAt: this.clock.now().getTime() });
  }

  /** The domain's wall sighting while it is fresh, else null. */
  recent(domain: string): WallSighting | null {
    const s = this.#seen.get(domain);
    if (!s) return null;
    if (performance.now() - s.at >= this.ttlMs || Math.abs(this.clock.now().getTime() - s.clockAt) >= this.ttlMs) {
      this.#seen.delete(domain);
      return null;
    }
    return { fetcher: s.fetcher, reason: s.reason, at: s.at };
  }
}
