import type { Page, Response } from 'playwright-core';
import { isCrawlerNavigation } from './background-requests.js';

const NO_DOCUMENT_STATUSES: ReadonlySet<number> = new Set([204, 205, 401]);

/**
 * The crawler's own navigation answered with a status Chromium shows no document for (204, 205, a 401 asking for a
 * password), once it has; and the latest response of that navigation (a download's, which never becomes a document).
 */
export function watchNoContent(page: Page): { readonly response: Response | null; readonly navigation: Response | null; stop(): void } {
  let response: Response | null = null;
  let navigation: Response | null = null;
  const onResponse = (r: Response) => {
    if (!isCrawlerNavigation(page, r.request())) return;
    navigation = r;
    if (NO_DOCUMENT_STATUSES.has(r.status())) response = r;
  };
  page.on('response', onResponse);
  return {
    get response() {
      return response;
    },
    get navigation() {
      return navigation;
    },
    stop: () => page.off('response', onResponse),
  };
}

/** Playwright's error for a navigation Chromium turned into a download. */
export function isDownloadStart(err: unknown): boolean {
  return err instanceof Error && /Download is starting/.test(err.message);
}

// After DOMContentLoaded, the network counts as quiet once nothing has been in flight for this long.
// Playwright's own 'networkidle' waits 500 ms; 250 ms catches an SPA's first API call at half the cost per page.
const QUIET_WINDOW_MS = 250;

/** A page's requests in flight, as {@link trackNetwork} counts them. */
export interface NetworkTracker {
  quiet(capMs: number): Promise<void>;
  stop(): void;
}

/** Count requests in flight so "network quiet" means quiet for this page, not Playwright's fixed 500 ms. */
export function trackNetwork(page: Page): NetworkTracker {
  let inFlight = 0;
  let lastChange = Date.now();
  const up = () => {
    inFlight++;
    lastChange = Date.now();
  };
  const down = () => {
    inFlight = Math.max(0, inFlight - 1);
    lastChange = Date.now();
  };
  page.on('request', up);
  page.on('requestfinished', down);
  page.on('requestfailed', down);
  return {
    async quiet(capMs: number) {
      const until = Date.now() + capMs;
      while (Date.now() < until) {
        if (inFlight === 0 && Date.now() - lastChange >= QUIET_WINDOW_MS) return;
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop() {
      page.off('request', up);
      page.off('requestfinished', down);
      page.off('requestfailed', down);
    },
  };
}
