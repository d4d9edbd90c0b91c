import type { BrowserContext, Page, Route } from 'playwright-core';
import { FetchError } from '../errors.js';
import { assertAllowedTarget, type AddressPolicy } from '../http/ssrf.js';

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
  /** Refuse requests to non-public addresses (SSRF guard); off when `allowPrivateNetworks`. */
  guard: boolean;
  addresses: AddressPolicy;
}

// A refused main-frame navigation, remembered per page so the fetcher reports blocked_address, not net::ERR_*.
const refusals = new WeakMap<Page, FetchError>();

/** The SSRF refusal that stopped this page's main navigation, if any. */
export function refusalFor(page: Page): FetchError | undefined {
  return refusals.get(page);
}

/** Part of a context's identity: contexts with different request policies must never be shared. */
export function policyKey(p: RequestPolicy): string {
  return `${p.guard ? 'guard' : 'open'}${p.blockResources ? '+block' : ''}`;
}

/**
 * Install the policy on a context, once, when it is created (not per page: every page of the site reuses it).
 * Without the guard only heavy-resource URLs are routed, so ordinary requests cost nothing extra; with the guard
 * every request is routed, because every host must be checked (a public page must not make the browser read
 * 169.254.169.254). Host verdicts are cached per context.
 */
export async function installRequestPolicy(context: BrowserContext, policy: RequestPolicy): Promise<void> {
  if (!policy.guard) {
    if (policy.blockResources) await context.route(HEAVY_RESOURCE_URL, (route) => route.abort('blockedbyclient').catch(() => undefined));
    return;
  }
  const verdicts = new Map<string, Promise<FetchError | null>>();
  const verdictFor = (url: URL) => {
    let v = verdicts.get(url.host);
    if (!v) {
      v = assertAllowedTarget(url, policy.addresses, { resolve: true }).then(
        () => null,
        (e: unknown) => (e instanceof FetchError ? e : new FetchError('blocked_address', String(e))),
      );
      verdicts.set(url.host, v);
    }
    return v;
  };
  await context.route('**/*', async (route: Route) => {
    const request = route.request();
    if (policy.blockResources && BLOCKED_TYPES.has(request.resourceType())) return route.abort('blockedbyclient').catch(() => undefined);
    const url = new URL(request.url());
    if (url.protocol === 'http:' || url.protocol === 'https:') {
      const refusal = await verdictFor(url);
      if (refusal) {
        const frame = request.frame();
        if (request.isNavigationRequest() && frame.parentFrame() === null) refusals.set(frame.page(), refusal);
        return route.abort('blockedbyclient').catch(() => undefined);
      }
    }
    return route.continue().catch(() => undefined);
  });
}
