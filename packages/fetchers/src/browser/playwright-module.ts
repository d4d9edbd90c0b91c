/**
 * playwright-core, imported on first use. Loading it costs about as much start-up as the rest of the crawler
 * together (1-2 s on a quiet 2-core machine), and a plain-HTTP worker or a `crawl crawl` with FETCHERS=simple_http
 * never launches a browser.
 */
type PlaywrightModule = typeof import('playwright-core');

let loaded: PlaywrightModule | null = null;
let loading: Promise<PlaywrightModule> | null = null;

/** The module, importing it the first time. */
export function loadPlaywright(): Promise<PlaywrightModule> {
  loading ??= import('playwright-core').then((m) => (loaded = m));
  return loading;
}

/** The module if something already imported it: a Playwright error can only come after that. */
export function loadedPlaywright(): PlaywrightModule | null {
  return loaded;
}
