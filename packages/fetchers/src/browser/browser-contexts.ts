import type { Browser } from 'playwright-core';
import type { Logger } from '@crawler/core';
import type { ResolvedFetchersOptions } from '../options.js';
import type { AddressPolicy } from '../http/ssrf.js';
import { contextProxyOf, type ContextExit, type ContextFactory } from './browser-pool.js';
import { installRequestPolicy, policyKey, type RequestPolicy } from './request-policy.js';
import { installBackgroundNavigationGuard } from './background-requests.js';
import type { ClearanceStore } from './clearance-store.js';

/**
 * What makes a browser fetcher flavour different: how its contexts are made. Stealth is the playwright
 * fetcher with hooks that inject a fingerprint, not a copy of it.
 */
export interface BrowserHooks extends ContextFactory {}

/** Plain contexts: one realistic desktop profile, no fingerprint games. */
export function plainHooks(options: ResolvedFetchersOptions): BrowserHooks {
  return {
    profile: 'plain',
    newContext: (browser: Browser, _site: string, exit?: ContextExit) =>
      browser.newContext({
        ...contextProxyOf(exit),
        userAgent: options.userAgent,
        viewport: { width: 1366, height: 768 },
        locale: 'en-US',
        // Service workers would serve later pages from their own cache and hide real statuses.
        serviceWorkers: 'block',
        // Chromium keeps no download: a navigation that turns into one is asked for again by the fetcher itself, with
        // plain HTTP's byte cap and decoding (file-request.ts).
        acceptDownloads: false,
      }),
  };
}

/** What a browser fetcher's contexts are made with besides its flavour's hooks. */
export interface FetcherContextsOptions {
  hooks: BrowserHooks;
  requests: RequestPolicy;
  /** The fetcher's address policy, which the background navigation guard enforces when `requests.guard` is set. */
  policy: AddressPolicy;
  log: Logger;
  /** Where the fleet's earned clearance is loaded from; none is restored when absent. */
  clearance: ClearanceStore | undefined;
  /** The fetcher's name, the clearance's flavour (with the exit's id for a proxied context). */
  flavour: string;
}

/**
 * A fetcher's contexts: made by its flavour's hooks, then given its request policy, the guard on navigations the page
 * starts itself, and the clearance the fleet earned on the site.
 */
export function fetcherContexts({ hooks, requests, policy, log, clearance, flavour }: FetcherContextsOptions): ContextFactory {
  return {
    profile: `${hooks.profile}|${policyKey(requests)}`,
    async newContext(browser, site, exit) {
      const context = await hooks.newContext(browser, site, exit);
      await installRequestPolicy(context, requests);
      // Registered last, so it sees a navigation before the resource policy does.
      if (requests.guard) await installBackgroundNavigationGuard(context, policy, log);
      // Clearance another browser of the fleet (or this process's previous Chromium) earned on this site.
      if (clearance) {
        // Clearance stays with the exit that earned it: a wall cleared from one address is not another's.
        const cookies = await clearance.load(site, exit ? `${flavour}@${exit.id}` : flavour).catch((err: unknown) => {
          log.warn({ err, site }, 'could not load shared clearance');
          return [];
        });
        if (cookies.length > 0) await context.addCookies(cookies).catch((err: unknown) => log.debug({ err, site }, 'could not restore shared clearance'));
      }
      return context;
    },
  };
}
