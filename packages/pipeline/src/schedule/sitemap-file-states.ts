import type { Redis } from 'ioredis';
import type { SitemapFileState } from '../crawls/sitemaps.js';

/** A crawl's states outlive a missed period or two; a cancelled crawl's go away on their own. */
const MIN_TTL_MS = 7 * 86_400_000;

/**
 * What each sitemap file of a crawl said at its last complete re-read (validators and the files it named), so the
 * next re-read asks conditionally. One Redis string per crawl under the deployment's prefix: a few dozen small
 * entries (SITEMAP_MAX_FILES bounds them), read and replaced whole once per period by the one process that holds
 * the crawl's period. Redis rather than Postgres because it is a cache: lost, expired or unreadable, the next re-read
 * downloads every file in full, as the first one does, and nothing else changes.
 */
export class SitemapFileStates {
  readonly #ttlMs: number;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** The re-read period: states are kept at least three of them. */
    intervalMs: number,
  ) {
    this.#ttlMs = Math.max(MIN_TTL_MS, 3 * intervalMs);
  }

  #key(crawlId: string): string {
    return `${this.prefix}:sitemap-files:${crawlId}`;
  }

  /** The crawl's states; empty when none are kept (or they cannot be read as such). */
  async load(crawlId: string): Promise<Map<string, SitemapFileState>> {
    const raw = await this.redis.get(this.#key(crawlId));
    if (raw === null) return new Map();
    try {
      const entries = JSON.parse(raw) as Array<[string, SitemapFileState]>;
      return new Map(entries.filter(([url, s]) => typeof url === 'string' && s !== null && typeof s === 'object' && Array.isArray(s.children)));
    } catch {
      return new Map();
    }
  }

  /** Replace the crawl's states (files no longer named drop out). */
  async save(crawlId: string, states: ReadonlyMap<string, SitemapFileState>): Promise<void> {
    if (states.size === 0) await this.redis.del(this.#key(crawlId));
    else await this.redis.set(this.#key(crawlId), JSON.stringify([...states]), 'PX', this.#ttlMs);
  }
}
