import type { BrowserContext, Page, Request, Route, WebSocket } from 'playwright-core';
import type { Logger } from '@crawler/core';
import { FetchError } from '../errors.js';
import { assertAllowedTarget, type AddressPolicy } from '../http/ssrf.js';
import type { EgressProxy } from './egress-proxy.js';

/**
 * What a page tries on its own, in the background, is never the crawler's business to fail on: subresources,
 * downloads, popups, fetch/XHR, frames, WebSockets and main-frame navigations the page started itself (a script
 * setting `location`, a meta refresh, a download link). Each is refused by the egress proxy when it points into
 * private space and logged at warn with the URL of the page the crawler navigated to; only the crawler's own
 * navigation (and its redirect chain) decides the fetch's fate.
 */

/** The crawler's navigation of a page: the first main-frame request the page made (its redirect hops follow it). */
const ours = new WeakMap<Page, Request>();

/** Whether `r` is the crawler's own navigation of its page, or one of that navigation's redirect hops. */
export function isCrawlerNavigation(page: Page, r: Request): boolean {
  if (!r.isNavigationRequest() || r.frame() !== page.mainFrame()) return false;
  let root = r;
  for (let prev = r.redirectedFrom(); prev; prev = prev.redirectedFrom()) root = prev;
  if (!ours.has(page)) ours.set(page, root);
  return ours.get(page) === root;
}

/** The URL the crawler navigated the page to (before redirects), once it has. */
export function crawlerUrlOf(page: Page): string | undefined {
  return ours.get(page)?.url();
}

function describeRequest(r: Request): Record<string, unknown> {
  return { target: r.url(), resourceType: r.resourceType() };
}

/**
 * Log, at warn and with the page's URL, every attempt of the page the egress proxy refused. Called once per page,
 * before the crawler navigates it.
 */
export function watchBackgroundRequests(page: Page, egress: EgressProxy, log: Logger): void {
  // A refused request can show up twice (the proxy's marked 204, then the aborted navigation): one line each.
  const logged = new Set<string>();
  const warnOnce = (key: string, fields: Record<string, unknown>, err: FetchError | null | undefined) => {
    if (logged.has(key) || (err?.code !== 'blocked_address' && err?.code !== 'too_large')) return;
    logged.add(key);
    warn(fields, err);
  };
  const warn = (fields: Record<string, unknown>, err: FetchError | null | undefined) => {
    if (err?.code === 'blocked_address') log.warn({ pageUrl: crawlerUrlOf(page) ?? page.url(), ...fields }, 'page tried to reach a non-public address in the background: refused');
    else if (err?.code === 'too_large') log.warn({ pageUrl: crawlerUrlOf(page) ?? page.url(), ...fields }, 'a resource of the page went past the byte cap: cut');
  };
  page.on('response', (response) => {
    const r = response.request();
    if (isCrawlerNavigation(page, r)) return;
    warnOnce(r.url(), describeRequest(r), egress.errorOfResponse(response.headers(), response.url()));
  });
  // A refused tunnel fails as ERR_TUNNEL_CONNECTION_FAILED; a refused cross-origin fetch() fails its CORS check on the
  // proxy's 204 (ERR_FAILED, no response event): either way the proxy remembers why it refused that host and port.
  page.on('requestfailed', (r) => {
    if (isCrawlerNavigation(page, r)) return;
    warnOnce(r.url(), describeRequest(r), egress.failureFor(r.url()));
  });
  page.on('websocket', (ws: WebSocket) => {
    // Chromium tunnels a WebSocket through the proxy; a refused tunnel closes it before any frame.
    ws.on('close', () => warn({ target: ws.url(), resourceType: 'websocket' }, egress.failureFor(ws.url())));
  });
}

/**
 * Guard the main-frame navigations a page starts itself (guard on only): a navigation whose target is itself refused
 * is aborted, which leaves the document in place. Nothing else holds the navigation: the page as rendered cannot be
 * read while its navigation is held (neither frame.evaluate nor CDP's Runtime.evaluate answers then; a snapshot tried
 * here timed out every time and delayed each such navigation, a wall's reload included, by its full second).
 */
export async function installBackgroundNavigationGuard(context: BrowserContext, policy: AddressPolicy, log: Logger): Promise<void> {
  await context.route('**/*', async (route: Route) => {
    const r = route.request();
    let page: Page;
    try {
      page = r.frame().page();
    } catch {
      return route.fallback().catch(() => undefined);
    }
    if (!r.isNavigationRequest() || r.frame() !== page.mainFrame() || isCrawlerNavigation(page, r)) return route.fallback().catch(() => undefined);
    try {
      await assertAllowedTarget(new URL(r.url()), policy, { resolve: true });
    } catch (err) {
      if (err instanceof FetchError && err.code === 'blocked_address') {
        log.warn({ pageUrl: crawlerUrlOf(page) ?? page.url(), ...describeRequest(r) }, 'page tried to navigate to a non-public address: refused');
        return route.abort('aborted').catch(() => undefined);
      }
      // A name that does not resolve: Chromium meets the same failure through the proxy.
    }
    return route.fallback().catch(() => undefined);
  });
}
