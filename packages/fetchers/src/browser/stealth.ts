import type { Browser } from 'playwright-core';
import type { BrowserFingerprintWithHeaders, FingerprintGenerator } from 'fingerprint-generator';
import type { FingerprintInjector } from 'fingerprint-injector';
import { FETCHERS } from '@crawler/core';
import { resolveFetchersOptions, type FetchersOptions, type ResolvedFetchersOptions } from '../options.js';
import { PlaywrightFetcher, type BrowserHooks, type PlaywrightFetcherDeps } from './playwright-fetcher.js';
import { contextProxyOf, type ContextExit } from './browser-pool.js';

// Sites remember visitors: the same site sees the same generated "person" across context replacements.
const MAX_REMEMBERED_SITES = 1000;

/**
 * Align a generated fingerprint's browser version with the Chromium really running. The generator's data lags
 * Debian's Chromium; a user agent claiming Chrome 147 on an engine that behaves like 156 is itself a tell.
 */
/** Client hints' GREASE entry ("Not A;Brand", "Not/A)Brand", ...), which carries no real version. */
function isGreaseBrand(brand: string): boolean {
  return /not.?a.?brand/i.test(brand);
}

export function alignFingerprintVersion(fp: BrowserFingerprintWithHeaders, realVersion: string): BrowserFingerprintWithHeaders {
  const realMajor = realVersion.split('.')[0] ?? realVersion;
  const nav = fp.fingerprint.navigator;
  const generatedMajor = nav.userAgent.match(/Chrome\/(\d+)/)?.[1];
  if (!generatedMajor || generatedMajor === realMajor) return fp;
  const swap = (s: string) => s.replace(new RegExp(`(Chrome|Edg|Chromium)/${generatedMajor}\\.[\\d.]+`, 'g'), `$1/${realMajor}.0.0.0`);
  const uaData = nav.userAgentData as
    | { brands?: { brand: string; version: string }[]; fullVersionList?: { brand: string; version: string }[]; uaFullVersion?: string }
    | undefined;
  // Every real brand (Chromium, Google Chrome, ...) takes the running version; only the GREASE brand ("Not A;Brand")
  // keeps its generated one. The generator's brand versions do not always equal its user agent's, and a page that
  // sees Chrome/140 in the user agent but Chromium 141 in the client hints has found a forged fingerprint.
  const brands = uaData?.brands?.map((b) => (isGreaseBrand(b.brand) ? b : { ...b, version: realMajor }));
  const fullVersionList = uaData?.fullVersionList?.map((b) => (isGreaseBrand(b.brand) ? b : { ...b, version: realVersion }));
  const headers = { ...fp.headers };
  if (headers['user-agent']) headers['user-agent'] = swap(headers['user-agent']);
  if (headers['sec-ch-ua']) {
    headers['sec-ch-ua'] = brands?.length
      ? brands.map((b) => `"${b.brand}";v="${b.version}"`).join(', ')
      : headers['sec-ch-ua'].replace(new RegExp(`v="${generatedMajor}"`, 'g'), `v="${realMajor}"`);
  }
  return {
    headers,
    fingerprint: {
      ...fp.fingerprint,
      navigator: {
        ...nav,
        userAgent: swap(nav.userAgent),
        appVersion: swap(nav.appVersion),
        // Only the fields the generator gave: an explicit `brands: undefined` would itself be a tell.
        userAgentData: (uaData
          ? { ...uaData, ...(brands ? { brands } : {}), ...(fullVersionList ? { fullVersionList } : {}), uaFullVersion: realVersion }
          : uaData) as typeof nav.userAgentData,
      },
    },
  };
}

/** Draws before giving up on a fingerprint that passes for a headed Chrome (about 1 in 25 generated ones does not). */
const MAX_FINGERPRINT_DRAWS = 20;

/**
 * A generated Chrome fingerprint that passes for a headed Chrome. The generator's data holds automation's own tells:
 * of 500 draws, 10 had client-hint brands naming `HeadlessChrome`, and 10 had none (the injector then leaves
 * Chromium's own brands, which in headless Chromium name `HeadlessChrome`). A wall that checks
 * `navigator.userAgentData.brands` refuses either, so the stealth browser failed such walls about once in 25 sites
 * (the simulator's webdriver-refusing wall and the test gate did, intermittently). Such a fingerprint is redrawn.
 */
export function drawFingerprint(generator: Pick<FingerprintGenerator, 'getFingerprint'>): BrowserFingerprintWithHeaders {
  let fp = generator.getFingerprint();
  for (let draw = 1; draw < MAX_FINGERPRINT_DRAWS && !passesForHeaded(fp); draw++) fp = generator.getFingerprint();
  return fp;
}

function passesForHeaded(fp: BrowserFingerprintWithHeaders): boolean {
  const nav = fp.fingerprint.navigator as { userAgent: string; webdriver?: unknown; userAgentData?: { brands?: { brand: string }[]; fullVersionList?: { brand: string }[] } };
  const brands = nav.userAgentData?.brands;
  const named = [...(brands ?? []), ...(nav.userAgentData?.fullVersionList ?? [])];
  return Array.isArray(brands) && brands.length > 0 && !named.some((b) => /headless/i.test(b.brand)) && !/headless/i.test(nav.userAgent) && nav.webdriver !== true;
}

/**
 * Hooks that make playwright into playwright_stealth: each site's context gets a generated, self-consistent
 * fingerprint (user agent, client hints, platform, languages, screen, WebGL vendor) injected before any page
 * script runs; the injector hides `navigator.webdriver`, and the generated user agent and brands replace
 * Chromium's `HeadlessChrome` markers.
 */
export function createStealthHooks(_options?: ResolvedFetchersOptions): BrowserHooks {
  // Imported and built on the first stealth context: the two libraries and the generator's model cost start-up a
  // process without stealth jobs should not pay.
  let tools: Promise<{ generator: FingerprintGenerator; injector: FingerprintInjector }> | undefined;
  const loadTools = () =>
    (tools ??= Promise.all([import('fingerprint-generator'), import('fingerprint-injector')]).then(([g, i]) => ({
      generator: new g.FingerprintGenerator({ browsers: [{ name: 'chrome' }], devices: ['desktop'], operatingSystems: ['linux'], locales: ['en-US'] }),
      injector: new i.FingerprintInjector(),
    })));
  const remembered = new Map<string, BrowserFingerprintWithHeaders>();
  const fingerprintFor = (generator: FingerprintGenerator, site: string, browserVersion: string): BrowserFingerprintWithHeaders => {
    let fp = remembered.get(site);
    if (!fp) {
      fp = alignFingerprintVersion(drawFingerprint(generator), browserVersion);
      if (remembered.size >= MAX_REMEMBERED_SITES) remembered.delete(remembered.keys().next().value as string);
      remembered.set(site, fp);
    }
    return fp;
  };
  return {
    profile: 'stealth',
    async newContext(browser: Browser, site: string, exit?: ContextExit) {
      const { generator, injector } = await loadTools();
      const fp = fingerprintFor(generator, site, browser.version());
      const { screen, navigator } = fp.fingerprint;
      const context = await browser.newContext({
        ...contextProxyOf(exit),
        userAgent: navigator.userAgent,
        locale: navigator.language,
        viewport: { width: Math.min(screen.availWidth || screen.width, 1920), height: Math.min(screen.availHeight || screen.height, 1080) },
        screen: { width: screen.width, height: screen.height },
        deviceScaleFactor: screen.devicePixelRatio || 1,
        extraHTTPHeaders: { 'accept-language': fp.headers['accept-language'] ?? 'en-US,en;q=0.9' },
        serviceWorkers: 'block',
        acceptDownloads: false,
      });
      // fingerprint-injector types the context as `playwright`'s; playwright-core's is the same class.
      await injector.attachFingerprintToPlaywright(context as never, fp);
      return context;
    },
  };
}

/** Create playwright_stealth: the playwright fetcher with fingerprint hooks. */
export function createStealthFetcher(opts: FetchersOptions = {}, deps: Omit<PlaywrightFetcherDeps, 'hooks' | 'name'> = {}): PlaywrightFetcher {
  const options = resolveFetchersOptions(opts);
  return new PlaywrightFetcher(options, { ...deps, hooks: createStealthHooks(options), name: FETCHERS.playwrightStealth });
}
