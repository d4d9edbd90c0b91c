import type { BrowserContext, Page, Route } from 'playwright-core';
import type { FetchError } from '../errors.js';
import type { Logger } from '@crawler/core';
import type { EgressProxy } from './egress-proxy.js';
import { isCrawlerNavigation, watchBackgroundRequests } from './background-requests.js';

const BLOCKED_TYPES = new Set(['image', 'media', 'font']);
const HEAVY_EXTENSIONS = [
  ...['jpg', 'jpeg', 'png', 'gif', 'webp', 'avif', 'svg', 'ico', 'bmp'],
  ...['mp4', 'webm', 'mp3', 'ogg', 'wav', 'm4a', 'mov', 'm3u8'],
  ...['woff', 'woff2', 'ttf', 'otf', 'eot'],
];
/** Heavy resources by URL: matched inside Playwright's server, so other requests never make a round trip. */
export const HEAVY_RESOURCE_URL = new RegExp(`\\.(${HEAVY_EXTENSIONS.join('|')})(\\?.*)?$`, 'i');

export interface RequestPolicy {
  /** Abort images, media and fonts. */
  blockResources: boolean;
  /** The SSRF guard is on (it is enforced by the egress proxy; here it only picks how resources are blocked). */
  guard: boolean;
}

// A main-frame navigation the egress proxy refused or could not complete, remembered per page so the fetcher
// reports blocked_address (or network_error, dns_error, timeout) instead of a 403 page or ERR_TUNNEL_CONNECTION_FAILED.
const refusals = new WeakMap<Page, FetchError>();
const refusalWaiters = new WeakMap<Page, (err: FetchError) => void>();

/** Why the egress proxy stopped this page's main navigation, if it did. */
export function refusalFor(page: Page): FetchError | undefined {
  return refusals.get(page);
}

/**
 * Rejects as soon as the egress proxy cuts this page's main document at the byte cap: such a document never reaches
 * DOMContentLoaded, so waiting for it would last until the fetch's deadline.
 */
export function whenRefused(page: Page): Promise<never> {
  const known = refusals.get(page);
  if (known?.code === 'too_large') return Promise.reject(known);
  return new Promise<never>((_resolve, reject) => refusalWaiters.set(page, reject));
}

function refuse(page: Page, err: FetchError): void {
  refusals.set(page, err);
  // Only a cut document needs the fetch to stop waiting: any other refusal ends the navigation on its own, and
  // closing a page while Chromium commits the proxy's answer can leave page.close() hanging.
  if (err.code !== 'too_large') return;
  refusalWaiters.get(page)?.(err);
  refusalWaiters.delete(page);
}

/** Part of a context's identity: contexts with different request policies must never be shared. */
export function policyKey(p: RequestPolicy): string {
  return `${p.guard ? 'guard' : 'open'}${p.blockResources ? '+block' : ''}`;
}

/**
 * Watch a page's first main-frame navigation — the fetcher's own `goto` on a fresh page — for the egress proxy's
 * answers: a refused plain-HTTP hop comes back as the proxy's marked 204, a refused tunnel (HTTPS) as
 * ERR_TUNNEL_CONNECTION_FAILED. Everything else the page tries is its own doing: refused, logged at warn with the
 * page's URL, and never a reason to fail the fetch (see background-requests.ts).
 */
export function watchEgress(page: Page, egress: EgressProxy, log: Logger): void {
  watchBackgroundRequests(page, egress, log);
  page.on('response', (response) => {
    if (!isCrawlerNavigation(page, response.request())) return;
    const err = egress.errorOfResponse(response.headers(), response.url());
    if (err) refuse(page, err);
  });
  page.on('requestfailed', (request) => {
    if (!isCrawlerNavigation(page, request)) return;
    const err = egress.failureFor(request.url());
    // A document the proxy cut at the byte cap breaks off with whatever network error Chromium makes of it.
    if (err && (err.code === 'too_large' || /ERR_TUNNEL_CONNECTION_FAILED|ERR_PROXY/.test(request.failure()?.errorText ?? ''))) refuse(page, err);
  });
}

/**
 * Install the policy on a context, once, when it is created (not per page: every page of the site reuses it).
 * Addresses are the egress proxy's business; this only keeps heavy resources out. With the guard on (production)
 * every request is routed so images are recognised by type whatever their URL; without it (tests, demos, the
 * benchmark) only heavy-resource URLs are, so ordinary requests cost nothing extra.
 */
export async function installRequestPolicy(context: BrowserContext, policy: RequestPolicy): Promise<void> {
  if (!policy.blockResources) return;
  if (!policy.guard) {
    // A URL with an image's extension asked for as the page itself (a crawled link to a .png) is the page: not blocked.
    await context.route(HEAVY_RESOURCE_URL, (route) =>
      (route.request().isNavigationRequest() ? route.continue() : route.abort('blockedbyclient')).catch(() => undefined),
    );
    return;
  }
  await context.route('**/*', async (route: Route) => {
    if (BLOCKED_TYPES.has(route.request().resourceType())) return route.abort('blockedbyclient').catch(() => undefined);
    return route.continue().catch(() => undefined);
  });
}
