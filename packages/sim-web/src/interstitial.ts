import { randomBytes } from 'node:crypto';

/** Where a `checking` interstitial's script reports that it set its cookie (the site counts solves). */
export const SOLVED_PATH = '/__sim/solved';

/** Name of the clearance cookie a wall's interstitial sets. */
export const CLEARANCE_COOKIE = 'sim_clearance';

export interface InterstitialOptions {
  /** Clearance token the script stores in the cookie (the site checks it was one it issued). */
  token: string;
  /** How long the script "checks" before it sets the cookie and reloads, in ms. */
  delayMs: number;
  /** Refuse a browser that exposes `navigator.webdriver` (or a headless user agent): only stealth passes. */
  refuseWebdriver: boolean;
  /**
   * A wall family no detector knows: neutral wording and title, and the cookie and reload reached through computed
   * names, as a vendor we have not met (or one that obfuscates its script) would serve. @defaultValue false
   */
  unknownFamily?: boolean;
  /**
   * The `Domain` the script gives its cookie (`example.com`: every host of the domain is sent it, as a wall that clears
   * a whole domain does). @defaultValue none: a host-only cookie
   */
  cookieDomain?: string;
  /** The cookie is `Secure` (a page served over HTTPS, as real walls set theirs). @defaultValue false */
  secure?: boolean;
}

/**
 * A cookie-and-reload interstitial in the shape of the web's "Just a moment…" pages (written for this simulator):
 * a near-blank page that says it is checking the browser, a script that waits, stores a clearance cookie and reloads,
 * and a noscript line for clients that cannot run it. The webdriver variant leaves an automated browser on the page.
 */
export function interstitialPage(opts: InterstitialOptions): string {
  const domain = (opts.cookieDomain ? `; domain=${opts.cookieDomain}` : '') + (opts.secure ? '; Secure' : '');
  const refuse = opts.refuseWebdriver
    ? `var n = navigator;
  var brands = (n.userAgentData && n.userAgentData.brands) || [];
  if (n.webdriver === true || /HeadlessChrome/.test(n.userAgent) || brands.some(function (b) { return /Headless/i.test(b.brand); })) {
    document.getElementById('status').textContent = 'Your browser could not be verified.';
    return;
  }
  `
    : '';
  if (opts.unknownFamily) {
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>One moment</title></head>
<body><p id="status">Hold on.</p>
<script>
(function () {
  ${refuse}var w = window, d = w['docu' + 'ment'];
  w.setTimeout(function () {
    d['coo' + 'kie'] = '${CLEARANCE_COOKIE}=${opts.token}; path=/; max-age=3600; SameSite=Lax${domain}';
    w['loc' + 'ation']['rel' + 'oad']();
  }, ${Math.max(0, Math.floor(opts.delayMs))});
})();
</script></body></html>`;
  }
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex,nofollow"><title>Just a moment...</title>
<style>body{font-family:system-ui,sans-serif;margin:20vh auto;max-width:36rem;text-align:center;color:#333}</style></head>
<body><h1>Checking your browser</h1><p id="status">This takes a moment.</p>
<noscript><p>Turn on JavaScript and cookies to continue.</p></noscript>
<script>
(function () {
  ${refuse}setTimeout(function () {
    document.cookie = '${CLEARANCE_COOKIE}=${opts.token}; path=/; max-age=3600; SameSite=Lax${domain}';
    var reload = function () { location.reload(); };
    try { fetch('${SOLVED_PATH}', { cache: 'no-store', keepalive: true }).then(reload, reload); } catch (e) { reload(); }
  }, ${Math.max(0, Math.floor(opts.delayMs))});
})();
</script></body></html>`;
}

/** Where an `f5_tspd` wall's sensor script is served (Bot Defense's stub names no id in the path). */
export const F5_TSPD_SCRIPT_PATH = '/TSPD/';
/** Name of the cookie an `f5_tspd` wall's sensor sets (ours; BIG-IP's are TS-prefixed too). */
export const F5_TSPD_COOKIE = 'TS01sim';

/**
 * F5 BIG-IP Bot Defense's JS-challenge stub in its shape (written for this simulator): a page with no content, served
 * with 200, whose only script is the sensor at /TSPD/?type=12, and a support ID for clients without JavaScript.
 */
export function f5TspdPage(opts: { supportId: string }): string {
  return `<!DOCTYPE html><html><head><meta http-equiv="Pragma" content="no-cache"/><meta http-equiv="Expires" content="-1"/><meta http-equiv="Content-Type" content="text/html; charset=utf-8"/>
<script type="text/javascript" src="${F5_TSPD_SCRIPT_PATH}?type=12"></script></head>
<body><noscript>Please enable JavaScript to view the page content.<br/>Your support ID is: ${opts.supportId}.</noscript></body></html>`;
}

/** The sensor: waits `delayMs`, stores the clearance `token` in its cookie and reloads. */
export function f5TspdScript(token: string, delayMs: number): string {
  return `(function () { setTimeout(function () { document.cookie = '${F5_TSPD_COOKIE}=${token}; path=/'; location.reload(); }, ${Math.max(0, Math.floor(delayMs))}); })();
`;
}

/** A fresh clearance token. */
export function newClearanceToken(): string {
  return randomBytes(12).toString('hex');
}

/** The clearance token a request's Cookie header carries in `cookie` (the interstitial's by default), if any. */
export function clearanceOf(cookieHeader: string | string[] | undefined, cookie: string = CLEARANCE_COOKIE): string | null {
  const raw = Array.isArray(cookieHeader) ? cookieHeader.join('; ') : (cookieHeader ?? '');
  for (const part of raw.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === cookie) return rest.join('=');
  }
  return null;
}
