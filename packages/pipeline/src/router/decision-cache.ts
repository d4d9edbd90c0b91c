import { BoundedMap, type Clock } from '@crawler/core';

interface Entry<V> {
  value: V;
  domain: string;
  /** performance.now() when stored. */
  storedAt: number;
  /** The injected clock's time when stored (simulated time may jump). */
  clockAt: number;
}

/** Options for {@link DecisionCache}. */
export interface DecisionCacheOptions {
  /** Entries kept at most, the oldest dropped first. @defaultValue 10_000 */
  maxEntries?: number;
  /** Setbacks this process saw: a domain's entries stored before its latest one are not reused. */
  setbacks?: DomainSetbacks;
}

/**
 * The router's short memory of its decisions (learned ones here; probe-walls.ts keeps its wall sightings in one too).
 * The learned step reads the store twice per link (the
 * pooled score for the URL's routing heuristics, and the domain's latest attempts): ~1 ms of router CPU and ~1 ms of
 * Postgres per page on the crawl bench, for an answer that, with a 30-day half-life, does not move in a second.
 * Entries expire after `ttlMs` of real time AND of the injected clock, so simulated weeks passing expire them too.
 * Only confident decisions are kept (the caller decides): a link that would probe always asks the store afresh, so
 * a new site is learned as fast as without the cache.
 */
export class DecisionCache<V> {
  readonly #entries = new Map<string, Entry<V>>();

  readonly #maxEntries: number;
  readonly #setbacks: DomainSetbacks | undefined;

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
    options: DecisionCacheOptions = {},
  ) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#setbacks = options.setbacks;
  }

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get(key: string): V | undefined {
    if (!this.enabled) return undefined;
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (
      performance.now() - e.storedAt >= this.ttlMs ||
      Math.abs(this.clock.now().getTime() - e.clockAt) >= this.ttlMs ||
      (this.#setbacks !== undefined && this.#setbacks.latest(e.domain) >= e.storedAt)
    ) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  /**
   * Keep `value` for `key` (a decision about `domain`). `observedAt`: the injected clock's time the decision was
   * taken, when that was before now (one learned from another process); it expires by that time.
   */
  set(key: string, domain: string, value: V, observedAt: number = this.clock.now().getTime()): void {
    if (!this.enabled) return;
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, domain, storedAt: performance.now(), clockAt: observedAt });
  }

  /** Forget everything (tests, and a router told that the store changed under it). */
  clear(): void {
    this.#entries.clear();
  }
}

/**
 * The fetch workers' word to the router of the same process that a domain just pushed back or needed another tool
 * (a wrong tool, a block, a rate limit): its cached decisions are dropped at once instead of after the cache's TTL.
 * Routers in other processes learn it from the store when their entries expire.
 */
export class DomainSetbacks {
  readonly #at = new Map<string, number>();

  constructor(private readonly maxDomains = 10_000) {}

  /** Record a setback on `domain` now. */
  record(domain: string): void {
    this.#at.delete(domain);
    // The oldest record goes first: by then the entries it outdated have expired (the cache's TTL is seconds).
    if (this.#at.size >= this.maxDomains) this.#at.delete(this.#at.keys().next().value as string);
    this.#at.set(domain, performance.now());
  }

  /** performance.now() of the domain's latest setback, or -Infinity. */
  latest(domain: string): number {
    return this.#at.get(domain) ?? Number.NEGATIVE_INFINITY;
  }
}

/**
 * Which URL sections (core `section` heuristic) may reuse a decision the router cached for their whole domain. A
 * section with enough attempts of its own is judged on them (core scopeLearned), so a domain-wide decision must not
 * stand in for it: once this router has routed `minPages` pages of a section, or seen it judged on its own, the
 * section's pages ask the store again (and then share decisions cached for the section alone). Counted per process,
 * by pages, not by time, so a section's own evidence is read as soon as it can exist. A site with one section per
 * article slug routes one page per section and keeps sharing its domain's decision, as before sections.
 */
export class SectionScopes {
  readonly #routed: BoundedMap<string, number>;
  readonly #own: BoundedMap<string, true>;

  /**
   * @param minPages - pages of a section after which its own evidence is asked for (the learned minimum sample size).
   * @param maxSections - sections remembered at most, the least recently counted dropped first. @defaultValue 10_000
   */
  constructor(
    private readonly minPages: number,
    maxSections = 10_000,
  ) {
    this.#routed = new BoundedMap(maxSections);
    this.#own = new BoundedMap(maxSections);
  }

  /** Count a page of `section` about to be routed; whether it may reuse its domain's cached decision. */
  routeDomainScoped(section: string): boolean {
    if (this.#own.has(section)) return false;
    const n = (this.#routed.get(section) ?? 0) + 1;
    this.#routed.set(section, n);
    return n <= this.minPages;
  }

  /** The store judged `section` on its own evidence: its pages no longer reuse domain-wide decisions. */
  judgedOnItsOwn(section: string): void {
    if (this.#own.has(section)) return;
    this.#own.set(section, true);
    this.#routed.delete(section);
  }
}
