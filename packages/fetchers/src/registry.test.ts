import { describe, expect, it } from 'vitest';
import { CrawlerError } from '@crawler/core';
import { FetcherRegistry, createDefaultRegistry } from './registry.js';
import type { Fetcher } from './contract.js';
import { resolveFetchersOptions } from './options.js';

function stubFetcher(name: string, closed: string[]): Fetcher {
  return {
    name,
    fetch: () => Promise.reject(new Error('not used')),
    close: async () => {
      closed.push(name);
    },
  };
}

describe('FetcherRegistry', () => {
  it('creates fetchers lazily, once, and resolves the direct_access alias', () => {
    let created = 0;
    const registry = new FetcherRegistry().register('simple_http', () => {
      created++;
      return stubFetcher('simple_http', []);
    });
    expect(created).toBe(0);
    const a = registry.get('direct_access');
    const b = registry.get(' Simple_HTTP ');
    expect(a).toBe(b);
    expect(created).toBe(1);
    expect(registry.has('direct_access')).toBe(true);
  });

  it('throws unknown_fetcher for a name nobody registered', () => {
    const registry = new FetcherRegistry();
    const err = (() => {
      try {
        registry.get('archive_proxy');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(CrawlerError);
    expect((err as CrawlerError).code).toBe('unknown_fetcher');
  });

  it('plugs in a new fetcher by name and closes every created one', async () => {
    const closed: string[] = [];
    const registry = new FetcherRegistry()
      .register('archive_proxy', () => stubFetcher('archive_proxy', closed))
      .register('youtube_downloader', () => stubFetcher('youtube_downloader', closed));
    expect(registry.names()).toEqual(['archive_proxy', 'youtube_downloader']);
    registry.get('archive_proxy');
    await registry.closeAll();
    expect(closed).toEqual(['archive_proxy']);
  });

  it('registers the three default fetchers without launching anything', async () => {
    const registry = createDefaultRegistry({ allowPrivateNetworks: true });
    expect(registry.names()).toEqual(['simple_http', 'playwright', 'playwright_stealth']);
    expect(registry.get('direct_access').name).toBe('simple_http');
    expect(registry.get('playwright_stealth').name).toBe('playwright_stealth');
    await registry.closeAll();
  });
});

describe('options', () => {
  it('fills defaults: guard on, 10 MiB, Debian Chromium', () => {
    const o = resolveFetchersOptions();
    expect(o.allowPrivateNetworks).toBe(false);
    expect(o.maxBytes).toBe(10 * 1024 * 1024);
    expect(o.chromiumPath).toBe('/usr/bin/chromium');
    expect(o.browser.blockResources).toBe(true);
  });

  it('fails fast naming the bad option and its value', () => {
    expect(() => resolveFetchersOptions({ maxBytes: -1 })).toThrow(/maxBytes.*-1/);
    expect(() => resolveFetchersOptions({ browser: { maxPages: 1.5 } })).toThrow(/browser\.maxPages.*1\.5/);
  });
});
