import { canonicalFetcherName, CrawlerError, FETCHERS } from '@crawler/core';
import type { Fetcher } from './contract.js';
import { HttpFetcher } from './http/http-fetcher.js';
import { BrowserPool } from './browser/browser-pool.js';
import { PlaywrightFetcher } from './browser/playwright-fetcher.js';
import { createStealthHooks } from './browser/stealth.js';
import type { ClearanceStore } from './browser/clearance-store.js';
import { resolveFetchersOptions, type FetchersOptions } from './options.js';

/** Builds a fetcher on first use. */
export type FetcherFactory = () => Fetcher;

/**
 * Fetchers by TEXT name. A new fetcher (an archive proxy, a video downloader) plugs in by registering a name;
 * router and workers need no change. Fetchers are created lazily, so a worker that never sees a browser job
 * never launches Chromium. Names are canonicalised (`direct_access` → `simple_http`).
 */
export class FetcherRegistry {
  readonly #factories = new Map<string, FetcherFactory>();
  readonly #instances = new Map<string, Fetcher>();

  /** Register (or replace, before first use) a fetcher under a name. */
  register(name: string, factory: FetcherFactory): this {
    const key = canonicalFetcherName(name);
    if (this.#instances.has(key)) throw new CrawlerError('fetcher_in_use', `fetcher ${key} is already created; close it before replacing`);
    this.#factories.set(key, factory);
    return this;
  }

  /** The fetcher for a name or alias; throws CrawlerError `unknown_fetcher` for a name nobody registered. */
  get(name: string): Fetcher {
    const key = canonicalFetcherName(name);
    let fetcher = this.#instances.get(key);
    if (!fetcher) {
      const factory = this.#factories.get(key);
      if (!factory) throw new CrawlerError('unknown_fetcher', `no fetcher registered as ${JSON.stringify(name)}`, { fetcher: name });
      fetcher = factory();
      this.#instances.set(key, fetcher);
    }
    return fetcher;
  }

  has(name: string): boolean {
    return this.#factories.has(canonicalFetcherName(name));
  }

  /** Canonical names registered, in registration order. */
  names(): string[] {
    return [...this.#factories.keys()];
  }

  /** Close every fetcher created so far; one failure does not stop the others. Idempotent. */
  async closeAll(): Promise<void> {
    const open = [...this.#instances.values()];
    this.#instances.clear();
    await Promise.allSettled(open.map((f) => f.close()));
  }
}

/**
 * simple_http, playwright and playwright_stealth. The two browser fetchers share ONE browser (and its page
 * budget) per process; the pool is closed with the last of them.
 */
/** What the default registry's fetchers share beyond their options. */
export interface DefaultRegistryDeps {
  /** Earned clearance shared by the fleet's browser fetchers (a {@link RedisClearanceStore} in a worker). */
  clearance?: ClearanceStore;
}

export function createDefaultRegistry(opts: FetchersOptions = {}, deps: DefaultRegistryDeps = {}): FetcherRegistry {
  const options = resolveFetchersOptions(opts);
  let pool: BrowserPool | undefined;
  let users = 0;
  const sharedPool = () => {
    pool ??= new BrowserPool(options);
    users++;
    return pool;
  };
  const release = async () => {
    if (--users === 0 && pool) {
      const p = pool;
      pool = undefined;
      await p.close();
    }
  };
  return new FetcherRegistry()
    .register(FETCHERS.simpleHttp, () => new HttpFetcher(options))
    .register(FETCHERS.playwright, () => new PlaywrightFetcher(options, { pool: sharedPool(), onClose: release, clearance: deps.clearance }))
    .register(
      FETCHERS.playwrightStealth,
      () => new PlaywrightFetcher(options, { pool: sharedPool(), onClose: release, hooks: createStealthHooks(options), name: FETCHERS.playwrightStealth, clearance: deps.clearance }),
    );
}
