import { createHash } from 'node:crypto';
import type { Browser, BrowserContext, Cookie, Page } from 'playwright-core';
import { Semaphore, type Logger } from '@crawler/core';
import { FetchError } from '../errors.js';
import type { FetchExit } from '../contract.js';
import { loadPlaywright } from './playwright-module.js';
import { CHROMIUM_ARGS, chromiumCaArgs, chromiumEncodingFlags, type ResolvedFetchersOptions } from '../options.js';
import type { AddressPolicy } from '../http/ssrf.js';
import { EgressProxy, type EgressStats } from './egress-proxy.js';
import { watchEgress } from './request-policy.js';
import { closePage } from './close-page.js';

/** How a fetcher flavour makes a context: plain, or with a fingerprint (stealth). */
export interface ContextFactory {
  /** Contexts of different profiles are never shared, even for the same site. */
  readonly profile: string;
  /** `exit`: the context leaves through this proxy server (the egress proxy's listener for its upstream). */
  newContext(browser: Browser, site: string, exit?: ContextExit): Promise<BrowserContext>;
}

/** A context's exit: Playwright's per-context `proxy`, and the exit's id (a hash of its URL, no credential). */
export interface ContextExit {
  server: string;
  id: string;
}

/** The id of an exit (a proxy URL) that may be shown or stored: a hash, never the URL. */
export function exitIdOf(proxyUrl: string): string {
  return createHash('sha256').update(proxyUrl).digest('hex').slice(0, 16);
}

/** Playwright's per-context proxy for an exit: loopback not bypassed, so every request meets the egress guard. */
export function contextProxyOf(exit: ContextExit | undefined): { proxy?: { server: string; bypass: string } } {
  return exit ? { proxy: { server: exit.server, bypass: '<-loopback>' } } : {};
}

interface ContextEntry {
  key: string;
  /** The upstream proxy the context leaves through, or null (direct). */
  proxyUrl: string | null;
  generation: number;
  context: Promise<BrowserContext>;
  pages: number;
  inFlight: number;
  lastUsedAt: number;
  retired: boolean;
}

interface BrowserEntry {
  generation: number;
  browser: Promise<Browser>;
  pages: number;
  inFlight: number;
  retired: boolean;
}

/** What the pool has done, for tests, metrics and the benchmark. */
export interface BrowserPoolStats {
  /** Browsers launched since the pool was created. */
  launches: number;
  /** Pages opened since the pool was created. */
  pagesOpened: number;
  /** Contexts created since the pool was created. */
  contextsCreated: number;
  /** Contexts open now. */
  openContexts: number;
  /** Pages open now. */
  inFlight: number;
  /** Whether a browser is running (or launching) now. */
  browserRunning: boolean;
  /** What the egress proxy let through and refused; null before the first launch. */
  egress: EgressStats | null;
}

/**
 * Sites whose cookies the pool keeps after their context closes, least recently stored first out. A context is closed
 * after `contextIdleMs` (30 s by default) or `maxPagesPerContext` pages, far sooner than a bot wall's clearance
 * cookie expires (real ones last from half an hour to days): without the carry-over each of a site's visits more than
 * 30 s apart met the wall's interstitial again.
 */
const KEPT_COOKIE_JARS = 1_000;
/** A site's jar is kept only up to this much cookie text (Chromium allows ~180 cookies of 4 KiB a domain). */
const KEPT_JAR_MAX_BYTES = 64 * 1024;

/** Whether two address policies are the same (a pool's browsers have one egress guard, so one policy). */
export function samePolicy(a: AddressPolicy, b: AddressPolicy): boolean {
  const hosts = (p: AddressPolicy) => [...new Set(p.allowHosts.map((h) => h.trim().toLowerCase()))].sort().join(',');
  return a.allowPrivateNetworks === b.allowPrivateNetworks && hosts(a) === hosts(b);
}

/**
 * ONE Chromium per process, shared by the browser fetchers. Launched on the first browser job; retired and
 * relaunched after `maxPagesPerBrowser` pages (Chromium leaks) or when it crashes. Contexts are per site and
 * profile — a new context costs about a second of Chromium time here — reused across that site's jobs, and
 * closed when idle or after `maxPagesPerContext` pages; its cookies (a bot wall's clearance) are handed to the site's
 * next context. At most `maxPages` pages are open at once.
 *
 * Chromium reaches the network only through the pool's {@link EgressProxy} (`--proxy-server`, with loopback taken
 * off Chromium's built-in bypass list), which applies the plain-HTTP fetcher's address check to every connection:
 * navigations, redirects, subresources, WebSockets. WebRTC may not send UDP around it; popups are blocked by
 * Chromium's own blocker and any page that still opens one is closed on sight; downloads are refused per context.
 */
export class BrowserPool {
  readonly #opts: ResolvedFetchersOptions;
  readonly #log: Logger;
  readonly #slots: Semaphore;
  readonly #contexts = new Map<string, ContextEntry>();
  /** Cookies of closed contexts by context key (profile and site), for the site's next context. */
  readonly #jars = new Map<string, Cookie[]>();
  /** Contexts being closed, by key: the site's next context waits for their cookies. */
  readonly #closing = new Map<string, Promise<void>>();
  #current: BrowserEntry | undefined;
  #generation = 0;
  #sweeper: NodeJS.Timeout | undefined;
  #egress: Promise<EgressProxy> | undefined;
  #egressStarted: EgressProxy | undefined;
  #closed = false;
  readonly #stats = { launches: 0, pagesOpened: 0, contextsCreated: 0 };

  constructor(options: ResolvedFetchersOptions) {
    this.#opts = options;
    // Not `component`: the logger handed in usually carries one already (pino would write the key twice).
    this.#log = options.logger.child({ pool: 'browser' });
    this.#slots = new Semaphore(options.browser.maxPages);
  }

  stats(): BrowserPoolStats {
    return {
      ...this.#stats,
      openContexts: this.#contexts.size,
      inFlight: this.#slots.inUse,
      browserRunning: this.#current !== undefined,
      egress: this.#egressStarted?.stats() ?? null,
    };
  }

  /**
   * The error a response stands for when it is the egress proxy's own answer (a refused or failed connection), or
   * null for a site's response: a document a script or a reload navigated to is checked with this.
   */
  egressErrorOf(headers: Record<string, string>, url: string): FetchError | null {
    return this.#egressStarted?.errorOfResponse(headers, url) ?? null;
  }

  /** Who this pool's browsers may connect to: the options' SSRF policy, enforced by the egress proxy. */
  get policy(): AddressPolicy {
    return { allowPrivateNetworks: this.#opts.allowPrivateNetworks, allowHosts: this.#opts.allowHosts };
  }

  /**
   * Run `fn` with a fresh page in `site`'s context (the context of `exit`'s proxy when it has one). The page is closed
   * afterwards whatever happens; `signal` aborts waiting for a slot and closes the page mid-work.
   */
  async withPage<T>(site: string, factory: ContextFactory, signal: AbortSignal, fn: (page: Page) => Promise<T>, exit: FetchExit | null = null): Promise<T> {
    const proxyUrl = exit?.proxyUrl ?? null;
    if (this.#closed) throw new FetchError('browser_error', 'browser pool is closed');
    await this.#slots.acquire(signal);
    let browserEntry: BrowserEntry | undefined;
    let ctxEntry: ContextEntry | undefined;
    let browser: Browser | undefined;
    let page: Page | undefined;
    let closing: Promise<boolean> | undefined;
    // Once for the abort and the cleanup alike: the abort's close makes the page's pending calls reject, so `fn` ends.
    const close = (p: Page, b: Browser) => (closing ??= closePage(p, b));
    const onAbort = () => void (page && browser ? close(page, browser) : undefined);
    try {
      browserEntry = this.#browserEntry();
      browserEntry.inFlight++;
      browserEntry.pages++;
      if (browserEntry.pages >= this.#opts.browser.maxPagesPerBrowser) browserEntry.retired = true;
      browser = await browserEntry.browser;
      // A proxied exit gets contexts of its own (cookies a site gave one address stay with it), leaving through the
      // egress proxy's listener for that upstream.
      const server = proxyUrl ? await (await this.#egressProxy()).exitUrl(proxyUrl, exit?.tier) : null;
      ctxEntry = this.#contextEntry(site, factory, browserEntry.generation, browser, server && proxyUrl ? { server, id: exitIdOf(proxyUrl), proxyUrl } : null);
      ctxEntry.inFlight++;
      ctxEntry.pages++;
      if (ctxEntry.pages >= this.#opts.browser.maxPagesPerContext) ctxEntry.retired = true;
      const context = await ctxEntry.context;
      page = await context.newPage();
      watchEgress(page, await this.#egressProxy(), this.#log);
      this.#stats.pagesOpened++;
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) throw signal.reason;
      return await fn(page);
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (page && browser && !(await close(page, browser)) && ctxEntry) {
        // Chromium kept the page open through every close: closing its context takes it along.
        ctxEntry.retired = true;
        this.#log.warn({ site }, 'a page stayed open after every close: its context is closed instead');
      }
      if (ctxEntry) {
        ctxEntry.inFlight--;
        ctxEntry.lastUsedAt = Date.now();
        if (ctxEntry.retired && ctxEntry.inFlight === 0) await this.#closeContext(ctxEntry);
      }
      if (browserEntry) {
        browserEntry.inFlight--;
        if (browserEntry.retired && browserEntry.inFlight === 0) await this.#closeBrowser(browserEntry);
      }
      this.#slots.release();
    }
  }

  #browserEntry(): BrowserEntry {
    if (this.#current && !this.#current.retired) return this.#current;
    const generation = ++this.#generation;
    const entry: BrowserEntry = { generation, browser: this.#launch(generation), pages: 0, inFlight: 0, retired: false };
    // A launch that failed must not be reused: the next job tries again.
    entry.browser.catch(() => {
      if (this.#current === entry) this.#current = undefined;
    });
    this.#current = entry;
    this.#ensureSweeper();
    return entry;
  }

  /** The egress proxy, started with the first launch and kept across relaunches until the pool closes. */
  #egressProxy(): Promise<EgressProxy> {
    if (!this.#egress) {
      const started = EgressProxy.start({ policy: this.policy, connectTimeoutMs: this.#opts.connectTimeoutMs, maxResponseBytes: this.#opts.maxBytes, logger: this.#log });
      this.#egress = started;
      started.then(
        (p) => (this.#egressStarted = p),
        () => this.#egress === started && (this.#egress = undefined),
      );
    }
    return this.#egress;
  }

  async #launch(generation: number): Promise<Browser> {
    this.#stats.launches++;
    let browser: Browser;
    try {
      const { chromium } = await loadPlaywright();
      const egress = await this.#egressProxy();
      const encoding = chromiumEncodingFlags(this.#opts.browser.headless);
      browser = await chromium.launch({
        executablePath: this.#opts.chromiumPath,
        headless: this.#opts.browser.headless,
        // Chromium bypasses a proxy for localhost and loopback addresses unless `<-loopback>` takes that rule away:
        // without it a page could reach 127.0.0.1 directly.
        args: [...CHROMIUM_ARGS, `--proxy-server=${egress.url}`, '--proxy-bypass-list=<-loopback>', ...chromiumCaArgs(this.#opts.extraCaCerts), ...encoding.args],
        // Playwright turns Chromium's popup blocker off; a crawler never clicks, so every popup is a page's own doing.
        // It also turns off Chromium's IPC flooding protection, which throttles a page's history.pushState/replaceState
        // storm: without it one such page floods the browser process until no other page loads and its own close takes
        // minutes, far past the fetch's deadline.
        ignoreDefaultArgs: ['--disable-popup-blocking', '--disable-ipc-flooding-protection', ...encoding.ignoreDefaultArgs],
        // Workers own shutdown order; Playwright must not install its own signal handlers.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (cause) {
      throw new FetchError('browser_error', `cannot launch Chromium at ${this.#opts.chromiumPath}`, { cause });
    }
    this.#log.info({ generation }, 'browser launched');
    browser.on('disconnected', () => {
      // A crash or kill: forget this browser and its contexts; the next job relaunches.
      for (const [key, c] of this.#contexts) if (c.generation === generation) this.#contexts.delete(key);
      if (this.#current?.generation === generation) {
        this.#current = undefined;
        this.#log.warn({ generation }, 'browser disconnected');
      }
    });
    return browser;
  }

  #contextEntry(site: string, factory: ContextFactory, generation: number, browser: Browser, exit: { server: string; id: string; proxyUrl: string } | null = null): ContextEntry {
    const key = `${factory.profile}|${site}${exit ? `|exit:${exit.id}` : ''}`;
    const existing = this.#contexts.get(key);
    if (existing && !existing.retired && existing.generation === generation) return existing;
    if (existing && existing.inFlight === 0) void this.#closeContext(existing);
    this.#evictIdleBeyondLimit();
    const entry: ContextEntry = {
      key,
      generation,
      proxyUrl: exit?.proxyUrl ?? null,
      context: factory.newContext(browser, site, exit ? { server: exit.server, id: exit.id } : undefined).then(async (context) => {
        // Our pages have no opener; anything else is a popup that got past the blocker: closed on sight.
        context.on('page', (p) => void p.opener().then((opener) => (opener ? p.close() : undefined)).catch(() => undefined));
        await this.#closing.get(key);
        const jar = this.#jars.get(key);
        this.#jars.delete(key);
        const live = jar?.filter((c) => c.expires === -1 || c.expires > Date.now() / 1000) ?? [];
        if (live.length > 0) await context.addCookies(live).catch((err: unknown) => this.#log.debug({ err, site }, 'could not restore cookies'));
        return context;
      }),
      pages: 0,
      inFlight: 0,
      lastUsedAt: Date.now(),
      retired: false,
    };
    entry.context.catch(() => this.#contexts.get(key) === entry && this.#contexts.delete(key));
    this.#stats.contextsCreated++;
    this.#contexts.set(key, entry);
    return entry;
  }

  #evictIdleBeyondLimit(): void {
    if (this.#contexts.size < this.#opts.browser.maxContexts) return;
    const idle = [...this.#contexts.values()].filter((c) => c.inFlight === 0).sort((a, b) => a.lastUsedAt - b.lastUsedAt);
    for (const c of idle.slice(0, this.#contexts.size - this.#opts.browser.maxContexts + 1)) void this.#closeContext(c);
  }

  #closeContext(entry: ContextEntry): Promise<void> {
    if (this.#contexts.get(entry.key) === entry) this.#contexts.delete(entry.key);
    const closing = entry.context
      .then(async (c) => {
        await this.#keepCookies(entry.key, c);
        await c.close();
      })
      .catch(() => undefined)
      .finally(() => this.#closing.get(entry.key) === closing && this.#closing.delete(entry.key));
    this.#closing.set(entry.key, closing);
    return closing;
  }

  /** Keep a closing context's cookies (a wall's clearance among them) for the site's next context. */
  async #keepCookies(key: string, context: BrowserContext): Promise<void> {
    if (this.#closed) return;
    const cookies = await context.cookies().catch(() => [] as Cookie[]);
    const bytes = cookies.reduce((n, c) => n + c.name.length + c.value.length + c.domain.length + c.path.length, 0);
    this.#jars.delete(key);
    if (cookies.length === 0 || bytes > KEPT_JAR_MAX_BYTES) return;
    if (this.#jars.size >= KEPT_COOKIE_JARS) this.#jars.delete(this.#jars.keys().next().value as string);
    this.#jars.set(key, cookies);
  }

  async #closeBrowser(entry: BrowserEntry): Promise<void> {
    if (this.#current === entry) this.#current = undefined;
    const contexts: ContextEntry[] = [];
    for (const [key, c] of this.#contexts) {
      if (c.generation !== entry.generation) continue;
      this.#contexts.delete(key);
      contexts.push(c);
    }
    // A retired browser's sites keep their cookies for the next browser's contexts.
    await Promise.allSettled(contexts.map((c) => c.context.then((x) => this.#keepCookies(c.key, x))));
    this.#log.info({ generation: entry.generation, pages: entry.pages }, 'browser retired');
    await entry.browser.then((b) => b.close()).catch(() => undefined);
  }

  #ensureSweeper(): void {
    if (this.#sweeper) return;
    const every = Math.max(250, Math.min(5000, Math.floor(this.#opts.browser.contextIdleMs / 2)));
    this.#sweeper = setInterval(() => {
      const cutoff = Date.now() - this.#opts.browser.contextIdleMs;
      for (const c of this.#contexts.values()) if (c.inFlight === 0 && c.lastUsedAt < cutoff) void this.#closeContext(c);
      // An exit's listener lives as long as a context leaves through it.
      const inUse = new Set([...this.#contexts.values()].flatMap((c) => (c.proxyUrl ? [c.proxyUrl] : [])));
      this.#egressStarted?.releaseExits(inUse, this.#opts.browser.contextIdleMs);
    }, every);
    this.#sweeper.unref();
  }

  /** Close contexts and the browser. Idempotent; in-flight pages fail with `browser_error`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#sweeper) clearInterval(this.#sweeper);
    const contexts = [...this.#contexts.values()];
    this.#contexts.clear();
    await Promise.allSettled(contexts.map((c) => c.context.then((x) => x.close())));
    const current = this.#current;
    this.#current = undefined;
    if (current) await current.browser.then((b) => b.close()).catch(() => undefined);
    if (this.#egress) await this.#egress.then((p) => p.close()).catch(() => undefined);
  }
}
