/** The label every domain beyond the tracked ones shares. */
export const OTHER_DOMAIN = 'other';

export interface DomainLabelerOptions {
  /** How many domains get their own label; the rest are "other". @defaultValue 50 */
  maxDomains?: number;
  /** Events a domain needs before it takes one of the slots, so one-off domains do not use them up. @defaultValue 3 */
  promoteAfter?: number;
  /** Domains that always get their own label (and do not count against maxDomains). */
  alwaysTrack?: string[];
}

// Counting every domain ever seen would itself be unbounded; forgetting counts now and then only delays promotion.
const MAX_COUNTED = 10_000;

/**
 * Bounds the cardinality of a `domain` label (each label value is a time series in Prometheus). Domains earn a
 * label of their own by being frequent: the first `maxDomains` to reach `promoteAfter` events keep it for the life
 * of the process; everything else, and a domain's events before promotion, count under "other".
 */
export class DomainLabeler {
  readonly #max: number;
  readonly #promoteAfter: number;
  readonly #always: Set<string>;
  readonly #tracked = new Set<string>();
  readonly #counts = new Map<string, number>();

  constructor(options: DomainLabelerOptions = {}) {
    this.#max = options.maxDomains ?? 50;
    this.#promoteAfter = options.promoteAfter ?? 3;
    this.#always = new Set((options.alwaysTrack ?? []).map((d) => d.toLowerCase()));
  }

  /** The label value to record `domain` under, counting this event toward its promotion. */
  label(domain: string): string {
    const d = domain.toLowerCase();
    if (this.#always.has(d) || this.#tracked.has(d)) return d;
    if (this.#tracked.size >= this.#max) return OTHER_DOMAIN;
    const count = (this.#counts.get(d) ?? 0) + 1;
    if (count >= this.#promoteAfter) {
      this.#counts.delete(d);
      this.#tracked.add(d);
      return d;
    }
    if (this.#counts.size >= MAX_COUNTED) this.#counts.clear();
    this.#counts.set(d, count);
    return OTHER_DOMAIN;
  }
}
