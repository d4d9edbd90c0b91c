import { createHash, X509Certificate } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { CrawlerError, silentLogger, type Logger } from '@crawler/core';

/** Browser pool settings shared by the playwright and playwright_stealth fetchers. */
export interface BrowserOptions {
  /** Pages open at once across all contexts. @defaultValue 4 */
  maxPages?: number;
  /** Pages a browser serves before it is retired and relaunched, to shed Chromium's leaks. @defaultValue 500 */
  maxPagesPerBrowser?: number;
  /** Close a site's context after it has been idle this long. @defaultValue 30000 */
  contextIdleMs?: number;
  /** Pages a site's context serves before it is replaced (cookies and cache do not grow forever). @defaultValue 100 */
  maxPagesPerContext?: number;
  /** Contexts kept open at once; the least recently used idle one is closed beyond this. @defaultValue 32 */
  maxContexts?: number;
  /** Abort images, media and fonts: they cost bandwidth and CPU and never change the HTML. @defaultValue true */
  blockResources?: boolean;
  /** After DOMContentLoaded, wait at most this long for the network to go quiet. @defaultValue 3000 */
  networkIdleCapMs?: number;
  /** Launch without a window. @defaultValue true */
  headless?: boolean;
  /**
   * When the rendered page is a challenge (an interstitial whose script sets a cookie and reloads), wait this long
   * for it to navigate into content before returning it as the block it is; 0 disables the wait (env
   * `CHALLENGE_WAIT_MS`). Real interstitials clear in about 5 s. A challenge that cannot clear by itself (a refusal,
   * a captcha, a waiting room: core's `ChallengeVerdict.kind`) is returned at once. @defaultValue 15000
   */
  challengeWaitMs?: number;
}

/** Options of every fetcher; apps build them from their parsed environment. */
export interface FetchersOptions {
  /**
   * Turn the SSRF guard off: allow loopback, private, link-local and other non-public addresses. For local tests
   * and demos only (env `ALLOW_PRIVATE_NETWORKS=true`). @defaultValue false
   */
  allowPrivateNetworks?: boolean;
  /** Hosts (exact names or IP literals) or CIDR ranges allowed even though they are not public. @defaultValue [] */
  allowHosts?: string[];
  /**
   * CA certificates (PEM, one per entry) trusted besides Node's bundled roots: a corporate TLS-inspecting proxy's, an
   * internal CA's (env `NODE_EXTRA_CA_CERTS`). Plain HTTP verifies chains against them as against any root; Chromium
   * cannot be handed a root on its command line, so the browsers accept a chain that carries one of these certificates
   * (see {@link chromiumCaArgs}). @defaultValue []
   */
  extraCaCerts?: string[];
  /** Chromium binary (env `CHROMIUM_PATH`). @defaultValue '/usr/bin/chromium' */
  chromiumPath?: string;
  /** User agent of plain HTTP and of the plain playwright fetcher. @defaultValue a current desktop Chrome on Linux */
  userAgent?: string;
  /** Largest body accepted, after decompression. @defaultValue 10485760 (10 MiB) */
  maxBytes?: number;
  /** Overall deadline of a fetch when the request gives none. @defaultValue 30000 */
  timeoutMs?: number;
  /** TCP + TLS connect timeout. @defaultValue 10000 */
  connectTimeoutMs?: number;
  /** Time allowed until response headers arrive. @defaultValue 15000 */
  headersTimeoutMs?: number;
  /** Longest silence allowed between two body chunks. @defaultValue 15000 */
  bodyTimeoutMs?: number;
  /** Redirects followed before giving up with `too_many_redirects`. @defaultValue 10 */
  maxRedirects?: number;
  /** Keep-alive connections per origin in the plain-HTTP pool. @defaultValue 8 */
  connectionsPerOrigin?: number;
  browser?: BrowserOptions;
  logger?: Logger;
}

export type ResolvedBrowserOptions = Required<BrowserOptions>;
export type ResolvedFetchersOptions = Required<Omit<FetchersOptions, 'browser'>> & { browser: ResolvedBrowserOptions };

/**
 * Response headers as large as Chromium takes (256 KiB), not Node's 16 KiB default: pages with a big CSP or a pile of
 * Set-Cookie headers load in any browser. Past it, the answer is too large, not a network fault to retry.
 */
export const MAX_RESPONSE_HEADER_BYTES = 256 * 1024;

/** Chrome 13x on Linux: what most desktop traffic looks like; sites that sniff UAs treat it as a browser. */
export const DEFAULT_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36';

/** Launch flags for Debian's Chromium in a container: no sandbox (no user namespaces), no background traffic. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--disable-sync',
  // WebRTC would otherwise send STUN/TURN over UDP straight to any address a page names, around the egress proxy.
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/**
 * The Blink settings Playwright gives a headless Chromium (a desktop's fine pointer and hover, where headless would say
 * "none"). Chromium reads only the last `--blink-settings`, so a launch that sets one of its own repeats these and
 * drops Playwright's (`ignoreDefaultArgs`); the sim-web encodings browser test fails if Playwright's flag changes.
 */
export const PLAYWRIGHT_HEADLESS_BLINK_SETTINGS = 'primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4';

/**
 * Chromium's flags for the text encoding of a page that declares none (no byte-order mark, no charset in its
 * Content-Type, no `<meta>`): UTF-8, where the en-US default is windows-1252. Chromium's detector still names a legacy
 * encoding it recognises (an undeclared windows-1252 or windows-1251 page reads as before) but never names UTF-8 for
 * a web page, so without this an undeclared UTF-8 page was rendered as mojibake ("CafÃ©"), with no U+FFFD to flag it.
 * Blink's own setting, read by every context of the browser at no cost per page; plain HTTP reads such a page as
 * UTF-8 too (core's `undeclaredCharset`).
 */
export function chromiumEncodingFlags(headless: boolean): { args: string[]; ignoreDefaultArgs: string[] } {
  const ours = 'defaultTextEncodingName=UTF-8';
  if (!headless) return { args: [`--blink-settings=${ours}`], ignoreDefaultArgs: [] };
  return { args: [`--blink-settings=${PLAYWRIGHT_HEADLESS_BLINK_SETTINGS},${ours}`], ignoreDefaultArgs: [`--blink-settings=${PLAYWRIGHT_HEADLESS_BLINK_SETTINGS}`] };
}

/**
 * Chromium's flags to trust `extraCaCerts`. Chromium verifies against the platform store (NSS on Linux) and takes no CA
 * on its command line; `--ignore-certificate-errors-spki-list` is the one per-process knob: a chain that fails to
 * verify is accepted when a certificate the server sent has one of these public keys. So a CA counts only when the
 * server (or the TLS-inspecting proxy) sends it in its chain, and such a chain skips Chromium's other checks (expiry,
 * host name) too. For Chromium's full checks, add the CA to its NSS database instead (README, "Private CAs").
 */
export function chromiumCaArgs(extraCaCerts: readonly string[]): string[] {
  extraCaCerts = withoutNodeRoots(extraCaCerts);
  if (extraCaCerts.length === 0) return [];
  const hashes = extraCaCerts.map((pem) => createHash('sha256').update(new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' })).digest('base64'));
  return [`--ignore-certificate-errors-spki-list=${[...new Set(hashes)].join(',')}`];
}

let nodeRootDigests: Set<string> | undefined;

/**
 * The SHA-256 of a PEM certificate's DER bytes, as X509Certificate's `fingerprint256` counts it, without parsing the
 * certificate: a process reading the system bundle (144 certificates here) against Node's 140-odd roots spent 40–60 ms
 * of its start-up parsing them, against 5 ms for this. Line wrapping and CRLFs do not change it.
 */
function derDigest(pem: string): string {
  return createHash('sha256').update(Buffer.from(pem.replace(/-----[^-]+-----|\s+/g, ''), 'base64')).digest('base64');
}

/** Whether `pem` is one of the public roots Node trusts by itself (compared by its DER bytes). */
export function isNodeRoot(pem: string): boolean {
  nodeRootDigests ??= new Set(rootCertificates.map(derDigest));
  return nodeRootDigests.has(derDigest(pem));
}

/**
 * `certs` less those Node already trusts as public roots. NODE_EXTRA_CA_CERTS often names the whole system bundle
 * (/etc/ssl/certs/ca-certificates.crt, 144 roots here): its public roots need no trust added, and given to Chromium they
 * would waive its checks for every chain a server sends one of them in.
 */
export function withoutNodeRoots(certs: readonly string[]): string[] {
  return certs.filter((pem) => !isNodeRoot(pem));
}

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new CrawlerError('invalid_config', `fetchers option ${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

function nonNegativeInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) {
    throw new CrawlerError('invalid_config', `fetchers option ${name} must be a non-negative integer, got ${String(value)}`);
  }
  return value;
}

/** Fill defaults and fail fast, naming the option and the value it got, on anything out of range. */
export function resolveFetchersOptions(opts: FetchersOptions = {}): ResolvedFetchersOptions {
  const b = opts.browser ?? {};
  return {
    allowPrivateNetworks: opts.allowPrivateNetworks ?? false,
    allowHosts: opts.allowHosts ?? [],
    extraCaCerts: opts.extraCaCerts ?? [],
    chromiumPath: opts.chromiumPath ?? '/usr/bin/chromium',
    userAgent: opts.userAgent ?? DEFAULT_USER_AGENT,
    maxBytes: positiveInt('maxBytes', opts.maxBytes, 10 * 1024 * 1024),
    timeoutMs: positiveInt('timeoutMs', opts.timeoutMs, 30_000),
    connectTimeoutMs: positiveInt('connectTimeoutMs', opts.connectTimeoutMs, 10_000),
    headersTimeoutMs: positiveInt('headersTimeoutMs', opts.headersTimeoutMs, 15_000),
    bodyTimeoutMs: positiveInt('bodyTimeoutMs', opts.bodyTimeoutMs, 15_000),
    maxRedirects: positiveInt('maxRedirects', opts.maxRedirects, 10),
    connectionsPerOrigin: positiveInt('connectionsPerOrigin', opts.connectionsPerOrigin, 8),
    logger: opts.logger ?? silentLogger,
    browser: {
      maxPages: positiveInt('browser.maxPages', b.maxPages, 4),
      maxPagesPerBrowser: positiveInt('browser.maxPagesPerBrowser', b.maxPagesPerBrowser, 500),
      contextIdleMs: positiveInt('browser.contextIdleMs', b.contextIdleMs, 30_000),
      maxPagesPerContext: positiveInt('browser.maxPagesPerContext', b.maxPagesPerContext, 100),
      maxContexts: positiveInt('browser.maxContexts', b.maxContexts, 32),
      blockResources: b.blockResources ?? true,
      networkIdleCapMs: positiveInt('browser.networkIdleCapMs', b.networkIdleCapMs, 3000),
      headless: b.headless ?? true,
      challengeWaitMs: nonNegativeInt('browser.challengeWaitMs', b.challengeWaitMs, 15_000),
    },
  };
}
