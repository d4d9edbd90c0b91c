import type { Browser, Page, Request, Response } from 'playwright-core';
import { CrawlerError, FETCHERS, registrableDomainOf } from '@crawler/core';
import { BaseFetcher, type PreparedRequest } from '../base-fetcher.js';
import type { FetchResult, Fetcher } from '../contract.js';
import { FetchError } from '../errors.js';
import { resolveFetchersOptions, type FetchersOptions, type ResolvedFetchersOptions } from '../options.js';
import { decodeText, isTextualType, mimeTypeOf, sniffCharset } from '../http/decode.js';
import { assertAllowedTarget, type AddressPolicy } from '../http/ssrf.js';
import { BrowserPool, contextProxyOf, exitIdOf, samePolicy, type ContextExit, type ContextFactory } from './browser-pool.js';
import { translatePlaywrightError } from './translate-error.js';
import { HttpFetcher } from '../http/http-fetcher.js';
import { fileAt, requestFile, watchDownloads, type FileAtUrl } from './file-request.js';
import { DomChanges } from './dom-changes.js';
import { NavigationBudget } from './navigation-budget.js';
import { installRequestPolicy, policyKey, refusalFor, whenRefused, type RequestPolicy } from './request-policy.js';
import { cookieWithin, type ClearanceStore } from './clearance-store.js';
import { SolveFlights, forSite, sentCookiesOf, solveScopeOf, waitForSolve, wentWithout, type SentCookies, type SolveResult } from './solve-flights.js';
import { installBackgroundNavigationGuard, isCrawlerNavigation, renderedBeforeFailedNavigation } from './background-requests.js';
import { DocumentTracker, UNKNOWN_WALL_WAIT_MS, WALL_STATUSES, challengeOf, documentLoaded, challengesBefore, earlierChallenge, mayClearItself, renderedVerdict, settledContent, type ChallengeEncounter, type RenderedChallenge } from './challenge-wait.js';

/**
 * What makes a browser fetcher flavour different: how its contexts are made. Stealth is the playwright
 * fetcher with hooks that inject a fingerprint, not a copy of it.
 */
export interface BrowserHooks extends ContextFactory {}

export interface PlaywrightFetcherDeps {
  /** Share a pool (and so one browser) with other browser fetchers; a private one is made when absent. */
  pool?: BrowserPool;
  /** Called once when the fetcher closes, instead of closing a shared pool. */
  onClose?: () => Promise<void>;
  hooks?: BrowserHooks;
  /** @defaultValue 'playwright' */
  name?: string;
  /** Where earned clearance is shared with the fleet (Redis in a worker); kept only in this process's memory when absent. */
  clearance?: ClearanceStore;
  /**
   * Plain HTTP's fetcher, which gets a file the browser's navigation ended on (a download, a PDF) with the page's
   * cookies and user agent. A private one is made on first use when absent (and closed with this fetcher).
   */
  files?: Fetcher;
}

/** Types Chromium renders as a page of their own: its DOM is the page. An untyped document is judged by what Chromium made of it. */
const RENDERED_TYPES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml']);
/** Types Chromium's PDF viewer takes over: the response's body is then the viewer's page, not the PDF. */
const PDF_TYPES: ReadonlySet<string> = new Set(['application/pdf', 'application/x-pdf']);

// After DOMContentLoaded, the network counts as quiet once nothing has been in flight for this long.
// Playwright's own 'networkidle' waits 500 ms; 250 ms catches an SPA's first API call at half the cost per page.
const QUIET_WINDOW_MS = 250;

// While a challenge page is waited on, how often the fetcher asks whether its document changed in place (one round
// trip that reads two numbers), and how soon and how rarely a changed document is read and judged again.
const DOM_LOOK_MS = 250;
const REJUDGE_MIN_MS = 250;
const REJUDGE_MAX_MS = 2_000;

// How often a page waiting for another worker's solve asks Redis whether the solve is over (one GET).
const FLEET_SOLVE_POLL_MS = 250;

/** One fetch's part in solving its site's wall: waiting for another page's solve, or solving it for the others. */
interface SolveTurn {
  site: string;
  /** The clearance's flavour: the fetcher's name, with the exit's id for a proxied context. */
  flavour: string;
  /**
   * The single-flight key: the site's registrable domain and the flavour. Sibling hosts wait for one solve, since a
   * clearance's reach (its cookies' Domain) is known only once it is earned; each then takes what its host is sent.
   */
  scope: string;
  /**
   * The page may still wait for another's solve. A wait that brings clearance for its host, or ends with none at all
   * (a failed solve, the bound), is its last: then it meets the wall like any page. One that brought clearance only
   * for other hosts (a sibling's host-only cookies) leaves it free to wait again or to solve for the others itself.
   */
  mayWait: boolean;
  /** When the page stops waiting for others' solves (epoch ms), fixed at its first wait: all its waits end by then. */
  waitUntil?: number;
  /** Set while this page solves for the others: ends the flight, and the fleet's claim when it holds one. */
  lead?: { settle: (result: SolveResult) => void; release?: () => Promise<void> };
}

/** The page met a wall another page is solving: it left the challenge, and renders again once that solve ends. */
interface SolveWait {
  waitFor: Promise<SolveResult>;
}

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

/**
 * playwright: the page rendered by Chromium. Waits for DOMContentLoaded, then for the network to go quiet
 * (capped), waits out a challenge page that clears itself (bounded), and returns the rendered HTML with the real
 * status and headers of the LAST main-frame document the browser landed on.
 */
export class PlaywrightFetcher extends BaseFetcher {
  readonly name: string;
  readonly #pool: BrowserPool;
  readonly #ownsPool: boolean;
  readonly #contexts: ContextFactory;
  readonly #onClose: (() => Promise<void>) | undefined;
  readonly #policy: AddressPolicy;
  readonly #clearance: ClearanceStore | undefined;
  readonly #flights = new SolveFlights();
  readonly #givenFiles: Fetcher | undefined;
  #ownFiles: Fetcher | undefined;
  #closed: Promise<void> | undefined;

  constructor(options: ResolvedFetchersOptions, deps: PlaywrightFetcherDeps = {}) {
    super(options, deps.name ?? FETCHERS.playwright);
    this.name = deps.name ?? FETCHERS.playwright;
    this.#ownsPool = deps.pool === undefined;
    this.#pool = deps.pool ?? new BrowserPool(options);
    this.#onClose = deps.onClose;
    this.#givenFiles = deps.files;
    this.#policy = { allowPrivateNetworks: options.allowPrivateNetworks, allowHosts: options.allowHosts };
    // The pool's egress proxy is the guard that counts: a fetcher whose policy differs from it would be a lie.
    if (!samePolicy(this.#policy, this.#pool.policy)) {
      throw new CrawlerError('invalid_config', `${this.name}: its address policy differs from the shared browser pool's`);
    }
    const hooks = deps.hooks ?? plainHooks(options);
    const requests: RequestPolicy = {
      blockResources: options.browser.blockResources,
      guard: !options.allowPrivateNetworks,
    };
    const policy = this.#policy;
    const log = this.log;
    const clearance = (this.#clearance = deps.clearance);
    const flavour = this.name;
    this.#contexts = {
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

  /** The pool behind this fetcher (stats for tests and benchmarks). */
  get pool(): BrowserPool {
    return this.#pool;
  }

  protected async fetchPrepared(req: PreparedRequest): Promise<FetchResult> {
    await assertAllowedTarget(req.url, this.#policy, { resolve: true });
    const site = siteOf(req.url);
    const proxyUrl = req.request.exit?.proxyUrl ?? null;
    const flavour = proxyUrl ? `${this.name}@${exitIdOf(proxyUrl)}` : this.name;
    const turn: SolveTurn = { site, flavour, scope: solveScopeOf(site, flavour), mayWait: true };
    // A page of the site is solving its wall now: wait for its clearance before meeting the wall (and before taking a
    // page slot). Not a sibling host's solve: the sibling's wall may not stand in front of this host.
    const inFlight = this.#flights.current(turn.scope);
    const earlier = inFlight?.site === site ? await this.#awaitSolve(turn, inFlight.result, req) : null;
    try {
      const result = await this.#pool.withPage(
        site,
        this.#contexts,
        req.signal,
        async (page) => {
          await this.#useClearance(page, earlier);
          let r = await this.#render(page, req, turn);
          while ('waitFor' in r) {
            await this.#useClearance(page, await r.waitFor);
            r = await this.#render(page, req, turn);
          }
          return r;
        },
        req.request.exit ?? null,
      );
      // A file: its bytes are asked for again, as the page asked (cookies, user agent, exit), once the page is closed.
      if ('file' in result) return await requestFile(this.#files(), this.name, req, result.file);
      return req.request.exit ? { ...result, exitTier: req.request.exit.tier } : result;
    } finally {
      await this.#endSolve(turn, null);
    }
  }

  /** How long a page may wait for another's solve: the challenge wait, and never more than half the fetch's time left (the rest is for its own solve if that one fails). */
  #solveWaitUntil(req: PreparedRequest): number {
    const now = Date.now();
    return now + Math.min(this.options.browser.challengeWaitMs, Math.max(0, (req.startedAt + req.timeoutMs - now) / 2));
  }

  /**
   * Wait (bounded by the page's wait deadline) for another page's solve: the cookies of its clearance this page's site
   * is sent, or null. A solve whose clearance reaches only other hosts leaves the page free to wait or solve again.
   */
  async #awaitSolve(turn: SolveTurn, solve: Promise<SolveResult>, req: PreparedRequest): Promise<SolveResult> {
    turn.mayWait = false;
    const until = (turn.waitUntil ??= this.#solveWaitUntil(req));
    const result = await waitForSolve(solve, until, req.signal);
    const mine = result ? forSite(result, turn.site) : [];
    if (mine.length > 0) return mine;
    if (result && Date.now() < until && !req.signal.aborted) turn.mayWait = true;
    return null;
  }

  async #useClearance(page: Page, cookies: SolveResult): Promise<void> {
    if (cookies && cookies.length > 0) await page.context().addCookies(cookies).catch((err: unknown) => this.log.debug({ err }, 'could not use the clearance another page earned'));
  }

  /**
   * The page met a wall that clears itself. Another page of its scope is solving it (in this process, or in another
   * worker holding the fleet's claim): the wait for that solve. Otherwise null, and this page is the solver the
   * others wait for.
   */
  async #solveOrWait(walled: Request, turn: SolveTurn, req: PreparedRequest): Promise<SolveWait | null> {
    const sent = await sentCookiesOf(walled);
    // Solved here after this page's request left: its clearance, not a new solve.
    const solved = turn.mayWait ? this.#flights.lastSolved(turn.scope) : undefined;
    if (solved && wentWithout(sent, solved)) {
      turn.mayWait = false;
      return { waitFor: Promise.resolve(forSite(solved, turn.site)) };
    }
    // From this check to the start of a flight nothing awaits: of the pages meeting the wall together, one solves.
    const inFlight = turn.mayWait ? this.#flights.current(turn.scope) : undefined;
    if (inFlight) return { waitFor: this.#awaitSolve(turn, inFlight.result, req) };
    turn.lead = { settle: this.#flights.start(turn.scope, turn.site) };
    const store = this.#clearance;
    if (!store?.claimSolve || !turn.mayWait) return null;
    turn.mayWait = false;
    turn.waitUntil ??= this.#solveWaitUntil(req);
    let release: (() => Promise<void>) | null;
    try {
      // The claim lasts no longer than this fetch can: a worker that dies mid-solve holds nobody up for long.
      release = await store.claimSolve(turn.site, turn.flavour, Math.max(1_000, req.startedAt + req.timeoutMs - Date.now()));
    } catch (err) {
      this.log.warn({ err, site: turn.site }, 'could not claim solving the wall: solving it without the fleet');
      return null;
    }
    if (release) {
      turn.lead.release = release;
      // A worker may have finished solving after this page's request left: its clearance, not a new solve.
      const stored = await store.load(turn.site, turn.flavour).catch(() => []);
      if (!wentWithout(sent, stored)) return null;
      await this.#endSolve(turn, stored);
      return { waitFor: Promise.resolve(stored) };
    }
    // Another worker solves (for this host or a sibling): wait for it, and this process's other pages wait with this one.
    return { waitFor: this.#waitForFleet(turn, sent, req) };
  }

  /**
   * Wait (bounded) until no worker holds the claim on solving the wall, then the clearance it left this page's site,
   * if any; this process's pages waiting on this one get the same. Nothing new for the site (a sibling's host-only
   * clearance, a failed solve) leaves the page free to claim the next solve itself.
   */
  async #waitForFleet(turn: SolveTurn, sent: SentCookies, req: PreparedRequest): Promise<SolveResult> {
    const store = this.#clearance!;
    const until = turn.waitUntil!;
    let solving = true;
    while (solving && Date.now() < until && !req.signal.aborted) {
      await new Promise((r) => setTimeout(r, Math.min(FLEET_SOLVE_POLL_MS, Math.max(0, until - Date.now()))));
      solving = await store.solving!(turn.site, turn.flavour).catch(() => false);
    }
    if (solving) {
      await this.#endSolve(turn, null);
      return null;
    }
    const cookies = await store.load(turn.site, turn.flavour).catch(() => []);
    const fresh = wentWithout(sent, cookies);
    // An empty clearance sends this process's waiters of the domain on to the next solve, as it does this page.
    await this.#endSolve(turn, fresh ? cookies : []);
    if (fresh) return cookies;
    if (Date.now() < until && !req.signal.aborted) turn.mayWait = true;
    return null;
  }

  /** This page's solve is over: the fleet's claim is released (after the clearance was saved), and its waiters get `result`. */
  async #endSolve(turn: SolveTurn, result: SolveResult): Promise<void> {
    const lead = turn.lead;
    if (!lead) return;
    turn.lead = undefined;
    try {
      await lead.release?.();
    } catch (err) {
      this.log.warn({ err, site: turn.site }, 'could not release the claim on solving the wall (it expires by itself)');
    }
    lead.settle(result);
  }

  /** Plain HTTP's fetcher for the files the browser meets. */
  #files(): Fetcher {
    return this.#givenFiles ?? (this.#ownFiles ??= new HttpFetcher(this.options));
  }

  async #render(page: Page, req: PreparedRequest, turn: SolveTurn): Promise<FetchResult | SolveWait | FileAtUrl> {
    const network = trackNetwork(page);
    const documents = new DocumentTracker(page);
    const noContent = watchNoContent(page);
    const downloads = watchDownloads(page);
    const navigations = NavigationBudget.watch(page);
    try {
      if (Object.keys(req.headers).length > 0) await page.setExtraHTTPHeaders(req.headers);
      const deadline = req.startedAt + req.timeoutMs;
      const remaining = () => Math.max(1, deadline - Date.now());
      let response: Response | null;
      try {
        const refused = whenRefused(page);
        refused.catch(() => undefined);
        response = await Promise.race([page.goto(req.url.href, { waitUntil: 'commit', timeout: remaining() }), refused]);
        // DOMContentLoaded, or the page as far as it was parsed when its script navigated to a download or a 204.
        if (response) await Promise.race([documentLoaded(page, response.request(), remaining()), refused]);
      } catch (err) {
        const refusal = refusalFor(page);
        if (refusal) throw refusal;
        // Chromium handed the navigation's response to its download manager (an attachment, a zip, a CSV): the file is
        // the result, asked for again with the page's cookies. (Downloads stay refused: Chromium keeps no bytes.)
        const download = downloads.last ?? noContent.navigation;
        if (download && isDownloadStart(err)) return await fileAt(page, download, redirectChainOf(download.request()));
        // A 204 or 205 is the site's answer that there is no document: Chromium stays where it was and goto fails
        // with ERR_ABORTED. A 401 asking for a password fails with ERR_INVALID_AUTH_CREDENTIALS (headless Chromium has
        // no dialog to cancel; its body is not kept). Each is a result, as for plain HTTP, not a browser fault to retry.
        const empty = noContent.response;
        if (!empty) throw err;
        const headers = await empty.allHeaders();
        return {
          fetcher: this.name,
          url: req.originalUrl,
          finalUrl: empty.url(),
          status: empty.status(),
          headers,
          body: new Uint8Array(0),
          contentType: mimeTypeOf(headers['content-type']),
          text: null,
          redirectChain: redirectChainOf(empty.request()),
          timings: { startedAt: req.startedAt, headersMs: null, totalMs: Date.now() - req.startedAt },
        };
      }
      const refused = refusalFor(page);
      if (refused) throw refused;
      if (!response) throw new FetchError('browser_error', 'navigation produced no response', { url: req.originalUrl, fetcher: this.name });
      await network.quiet(Math.min(this.options.browser.networkIdleCapMs, remaining()));
      let html: string | null = await settledContent(page, deadline);
      // A script may already have replaced the first document (a quick interstitial): what counts is the latest one.
      let current = documents.last ?? response;
      let headers = await current.allHeaders();
      // A rendered page past the cap ends here, before its HTML is judged and waited on: its UTF-8 is at least as many
      // bytes as its UTF-16 code units. (A viewer's page is not the result: its document's bytes are.)
      const shownType = mimeTypeOf(headers['content-type']);
      if (html.length > req.maxBytes && (shownType === null || RENDERED_TYPES.has(shownType))) throw await this.#renderedTooLarge(current, req);
      const { challenge, isEmpty } = renderedVerdict(current.status(), headers, html);
      // A check may already have reloaded into this challenge (a refusal after a JS check) before the first look: the
      // encounter started on that check.
      const first = challenge && documents.documents.length > 1 ? await earlierChallenge(documents) : undefined;
      if (challenge?.kind === 'interstitial' && !turn.lead) {
        const other = await this.#solveOrWait(current.request(), turn, req);
        if (other) {
          // Off the challenge before its script solves it too; the page renders again with the solver's clearance.
          await page.goto('about:blank').catch(() => undefined);
          return other;
        }
      }
      let encounter = challenge ? await this.#waitOutChallenge(page, documents, network, navigations, challenge, first ?? challenge, current, deadline, () => downloads.last !== null) : null;
      if (!encounter && documents.documents.length === 1 && mayClearItself(current.status(), html, isEmpty)) {
        // A page with a script that no detector knows, answered with a wall's status or with nothing to read (a wall
        // family we have not met): give the script a moment to ask for the page again, then judge it by what it did
        // (earlierChallenge).
        const until = Math.min(Date.now() + Math.min(UNKNOWN_WALL_WAIT_MS, this.options.browser.challengeWaitMs), deadline - 1_000);
        if (await documents.next(1, until)) {
          await page.waitForLoadState('domcontentloaded', { timeout: remaining() }).catch(() => undefined);
          await network.quiet(Math.min(this.options.browser.networkIdleCapMs, remaining()));
          // Wall or not, the page is now the one the script went to.
          current = documents.last ?? current;
          html = await settledContent(page, deadline);
          headers = await current.allHeaders();
        } else {
          // No wall: the page stayed. Its script had those seconds too, and an app that asks for its data after a
          // timer has rendered it by now: the page as it stands is the result, not the shell read before the wait.
          await network.quiet(Math.min(this.options.browser.networkIdleCapMs, remaining()));
          html = await settledContent(page, deadline);
        }
      }
      if (!encounter && documents.documents.length > 1) {
        // Already through: the interstitial reloaded into content while the page settled. Record what it was.
        const earlier = await challengesBefore(documents);
        if (earlier) encounter = { ...earlier.last, firstVendor: earlier.first.vendor, firstKind: earlier.first.kind, cleared: true, waitedMs: 0, documents: documents.documents };
      }
      const download = downloads.last;
      if (encounter && download) {
        // The wall's script reloaded onto a file (a download never replaces the challenge on screen): through.
        encounter.cleared = true;
        await this.#endSolve(turn, await this.#shareClearance(page, turn));
        return await fileAt(page, download, redirectChainOf(download.request()), encounter);
      }
      if (encounter) {
        current = documents.last ?? current;
        html = await settledContent(page, deadline);
        headers = await current.allHeaders();
        // Through means neither a challenge nor a wall's status: a wall family we do not know ends walled on its status.
        const last = challengeOf(current.status(), headers, html);
        encounter.cleared = last === undefined && !WALL_STATUSES.has(current.status());
        // A page still walled is what the wait ended on, whatever the wait saw before it.
        if (last) {
          encounter.vendor = last.vendor;
          encounter.kind = last.kind;
        }
        await this.#endSolve(turn, encounter.cleared ? await this.#shareClearance(page, turn) : null);
      }
      // A navigation the page started itself that ended on Chromium's error page (a refused tunnel on a redirect hop)
      // does not cost the page: what it had rendered before is the result, with the document it came from.
      const before = renderedBeforeFailedNavigation(page);
      if (before !== undefined) html = before;
      // Every hop, and every reload, went through the egress proxy, which checked its address before connecting and
      // answers a refusal with a 204 that never becomes a document; a marked document here is the proxy failing.
      const refusedLater = this.#pool.egressErrorOf(headers, current.url()) ?? refusalFor(page);
      if (refusedLater) throw refusedLater;
      const redirectChain = redirectChainOf(current.request());
      const contentType = mimeTypeOf(headers['content-type']);
      // A document that is not HTML (JSON, plain text, XML, an image) is shown in a viewer of Chromium's own: the page's
      // HTML is the viewer's, so the result is the bytes the site sent. A PDF's viewer takes its bytes: the file is
      // asked for again with the page's cookies, as for a download.
      if (contentType !== null && !RENDERED_TYPES.has(contentType)) {
        if (PDF_TYPES.has(contentType)) return await fileAt(page, current, redirectChain, encounter);
        html = null;
      }
      const body = html === null ? new Uint8Array(await current.body()) : new TextEncoder().encode(html);
      // The rendered page is written out as UTF-8, whatever charset the site served it in: its Content-Type says so, or
      // everything that reads the stored page (content, exports, a revisit's links) decodes it as windows-1252 or
      // Shift_JIS and shows mojibake. (The header outranks a <meta charset> left in the markup.)
      if (html !== null && headers['content-type']) headers = { ...headers, 'content-type': withUtf8Charset(headers['content-type']) };
      // So is the text of a document Chromium shows in its viewer (text/plain, JSON, XML): the body it hands over is
      // its decoding, in UTF-8, not the bytes sent. Bytes that are not UTF-8 were handed over as they came.
      else if (html === null && headers['content-type'] && isTextualType(contentType, body) && isUtf8(body)) headers = { ...headers, 'content-type': withUtf8Charset(headers['content-type']) };
      if (body.length > req.maxBytes) {
        if (html !== null) throw await this.#renderedTooLarge(current, req);
        throw new FetchError('too_large', `body exceeds ${req.maxBytes} bytes`, { url: req.originalUrl, fetcher: this.name });
      }
      const text = !isTextualType(contentType, body) ? null : (html ?? decodeText(body, sniffCharset(body, headers['content-type'])));
      // What the document was read in, handed on beside its UTF-8: its links' queries are written in it, as the browser
      // writes them. Not for a page a failed navigation left behind (what is on screen is Chromium's error page).
      const documentCharset = text !== null && before === undefined ? await documentCharsetOf(page) : undefined;
      return {
        fetcher: this.name,
        url: req.originalUrl,
        finalUrl: before !== undefined ? current.url() : page.url(),
        status: current.status(),
        headers,
        body,
        contentType,
        text,
        ...(documentCharset ? { documentCharset } : {}),
        redirectChain,
        ...(encounter ? { challenge: encounter } : {}),
        timings: { startedAt: req.startedAt, headersMs: null, totalMs: Date.now() - req.startedAt },
      };
    } finally {
      network.stop();
      documents.stop();
      noContent.stop();
      downloads.stop();
      await navigations.stop();
      if (navigations.refused > 0 || navigations.framesRefused > 0) {
        this.log.warn({ url: req.url.href, navigations: navigations.sent, refused: navigations.refused, framesRefused: navigations.framesRefused }, 'page kept navigating by itself: stopped on the document it had');
      }
    }
  }

  /**
   * The rendered page is a challenge: give its script up to `challengeWaitMs` (and never past the fetch's deadline)
   * to navigate or reload into content, as it does in a real browser. Each new main-frame document is rendered and
   * checked again; a second challenge (a two-step interstitial) keeps waiting. The document on screen is checked again
   * too when it changes in place: a check may end without navigating, its script swapping its spinner for a captcha or
   * writing a refusal over the page. The cookie the script set stays in the site's context, so the site's next pages
   * skip the wall. A page that cannot clear by itself (a refusal, a captcha, a waiting room) is not waited on: it is
   * the result at once, as it would be after the wait, whether it is the first page, the one the interstitial led to,
   * or the one it turned into.
   */
  async #waitOutChallenge(page: Page, documents: DocumentTracker, network: NetworkTracker, navigations: NavigationBudget, challenge: RenderedChallenge, first: RenderedChallenge, shown: Response, fetchDeadline: number, downloaded: () => boolean): Promise<ChallengeEncounter> {
    const { vendor, kind } = challenge;
    const encounter: ChallengeEncounter = { vendor, kind, firstVendor: first.vendor, firstKind: first.kind, cleared: false, waitedMs: 0, documents: documents.documents };
    if (kind !== 'interstitial') {
      this.log.debug({ url: page.url(), vendor, kind }, 'challenge page cannot clear by itself: not waited on');
      return encounter;
    }
    const started = Date.now();
    // Leave a second of the fetch's own deadline for reading the page: a wall that does not clear is a result (the
    // block it always was), not a timeout.
    const deadline = Math.min(started + this.options.browser.challengeWaitMs, fetchDeadline - 1_000);
    let seen = documents.documents.length;
    let dom = await DomChanges.watch(page);
    // A document that changes without turning into anything (a spinner's text, a countdown) is read again at most this
    // often, the spacing doubling each time it is still the same check: the cost of the wait stays a few reads of a
    // small page, however busy its script.
    let spacingMs = REJUDGE_MIN_MS;
    let judgedAt = started;
    let inPlaceReads = 0;
    try {
      // A page stopped from navigating further cannot reload into content: the rest of the wait would be for nothing.
      // One whose script reloaded onto a file is through (the file is the result).
      while (Date.now() < deadline && navigations.refused === 0 && !downloaded()) {
        if (!(await documents.next(seen, Math.min(deadline, Date.now() + DOM_LOOK_MS)))) {
          if (Date.now() - judgedAt < spacingMs || !(await dom.changed())) continue;
          judgedAt = Date.now();
          inPlaceReads += 1;
          const html = await settledContent(page, fetchDeadline).catch(() => null);
          if (html === null) continue;
          const current = documents.last ?? shown;
          const now = challengeOf(current.status(), await current.allHeaders(), html);
          // Only a page that can no longer clear by itself ends the wait here. One the detectors stop recognising is
          // still waited on: a check's script rewrites its own page as it works (a progress line, a solved proof of
          // work, its script element removed), and what it led to is judged when its navigation lands.
          if (now !== undefined && now.kind !== 'interstitial') {
            encounter.vendor = now.vendor;
            encounter.kind = now.kind;
            this.log.debug({ url: page.url(), vendor: now.vendor, kind: now.kind }, 'challenge page turned in place into one that cannot clear by itself: wait ends');
            break;
          }
          spacingMs = Math.min(spacingMs * 2, REJUDGE_MAX_MS);
          continue;
        }
        seen = documents.documents.length;
        await page.waitForLoadState('domcontentloaded', { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
        await network.quiet(Math.min(this.options.browser.networkIdleCapMs, Math.max(0, deadline - Date.now())));
        // Another navigation already started: take it from the top.
        if (documents.documents.length > seen) continue;
        const last = documents.last;
        if (!last) continue;
        const html = await settledContent(page, fetchDeadline).catch(() => null);
        if (html === null) continue;
        const now = challengeOf(last.status(), await last.allHeaders(), html);
        if (now === undefined) break;
        encounter.vendor = now.vendor;
        encounter.kind = now.kind;
        // The check ended on a page that cannot clear by itself (a firewall block after a JS challenge, a captcha the
        // check escalated to): the rest of the wait would hold the browser for this very page.
        if (now.kind !== 'interstitial') {
          this.log.debug({ url: page.url(), vendor: now.vendor, kind: now.kind }, 'challenge turned into one that cannot clear by itself: wait ends');
          break;
        }
        // Another check on a new document: watch that one.
        await dom.stop();
        dom = await DomChanges.watch(page);
        spacingMs = REJUDGE_MIN_MS;
        judgedAt = Date.now();
      }
    } finally {
      await dom.stop();
    }
    encounter.waitedMs = Date.now() - started;
    this.log.debug({ url: page.url(), vendor: encounter.vendor, kind: encounter.kind, firstVendor: encounter.firstVendor, waitedMs: encounter.waitedMs, documents: encounter.documents.length, inPlaceReads }, 'waited on a challenge page');
    return encounter;
  }

  /**
   * The rendered page outgrew the byte cap. When the page as served fits and reads as a page (neither empty nor a
   * challenge), it is plain HTTP's to store, as served: Chromium's serialisation quotes every attribute and closes
   * every element, so a page of bare links grows by half. Otherwise it is too large for any tool.
   */
  async #renderedTooLarge(served: Response, req: PreparedRequest): Promise<FetchError> {
    const what = `rendered HTML exceeds ${req.maxBytes} bytes`;
    const context = { url: req.originalUrl, fetcher: this.name };
    const body = await served.body().catch(() => null);
    if (body !== null && body.length > 0 && body.length <= req.maxBytes) {
      const headers = await served.allHeaders().catch(() => ({}) as Record<string, string>);
      const verdict = renderedVerdict(served.status(), headers, decodeText(body, sniffCharset(body, headers['content-type'])));
      if (!verdict.isEmpty && verdict.challenge === undefined) {
        return new FetchError('wrong_tool', `${what}; the page as served (${body.length} bytes) is readable: plain HTTP stores it`, context);
      }
    }
    return new FetchError('too_large', what, context);
  }

  /** The page passed a wall: its context's cookies are the clearance the site's other pages, and the rest of the fleet, can start with. */
  async #shareClearance(page: Page, turn: SolveTurn): Promise<SolveResult> {
    const cookies = await page
      .context()
      .cookies()
      .catch(() => null);
    if (!cookies) return null;
    if (this.#clearance) {
      try {
        await this.#clearance.save(turn.site, turn.flavour, cookies);
      } catch (err) {
        this.log.warn({ err, site: turn.site }, 'could not share clearance');
      }
    }
    // The domain's pages wait for its cookies, not the whole jar (a third party's cookie is no clearance); each takes
    // the ones its host is sent (#awaitSolve), and a host they do not reach solves for itself.
    const domain = registrableDomainOf(turn.site) ?? turn.site;
    return cookies.filter((c) => cookieWithin(c, domain));
  }

  protected override translateError(err: unknown, req: PreparedRequest): FetchError {
    return translatePlaywrightError(err, { url: req.originalUrl, fetcher: this.name, signal: req.signal }) ?? super.translateError(err, req);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#ownFiles?.close();
      if (this.#ownsPool) await this.#pool.close();
      await this.#onClose?.();
    })();
    return this.#closed;
  }
}

/** Create the plain playwright fetcher with its own browser pool. */
export function createPlaywrightFetcher(opts: FetchersOptions = {}, deps: PlaywrightFetcherDeps = {}): PlaywrightFetcher {
  return new PlaywrightFetcher(resolveFetchersOptions(opts), deps);
}

/** A browser context's site: the host without `www.` (the pool's contexts and the shared clearance are keyed by it). */
function siteOf(url: URL): string {
  return url.hostname.replace(/^www\./, '').toLowerCase();
}

function redirectChainOf(request: Request): string[] {
  const chain: string[] = [];
  for (let r = request.redirectedFrom(); r; r = r.redirectedFrom()) chain.unshift(r.url());
  return chain;
}

const NO_DOCUMENT_STATUSES: ReadonlySet<number> = new Set([204, 205, 401]);

function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The encoding Chromium read the page's document in (`document.characterSet`), lower-case as plain HTTP names it. */
async function documentCharsetOf(page: Page): Promise<string | undefined> {
  const name = await page.evaluate(() => document.characterSet).catch(() => null);
  return typeof name === 'string' && name !== '' ? name.toLowerCase() : undefined;
}

/** A Content-Type naming UTF-8 as its charset, in place of the one it named or added to it. */
function withUtf8Charset(contentType: string): string {
  const params = contentType.split(';').filter((p, i) => i === 0 || !/^\s*charset\s*=/i.test(p));
  return [...params, ' charset=utf-8'].join(';');
}

/**
 * The crawler's own navigation answered with a status Chromium shows no document for (204, 205, a 401 asking for a
 * password), once it has; and the latest response of that navigation (a download's, which never becomes a document).
 */
function watchNoContent(page: Page): { readonly response: Response | null; readonly navigation: Response | null; stop(): void } {
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
function isDownloadStart(err: unknown): boolean {
  return err instanceof Error && /Download is starting/.test(err.message);
}

interface NetworkTracker {
  quiet(capMs: number): Promise<void>;
  stop(): void;
}

/** Count requests in flight so "network quiet" means quiet for this page, not Playwright's fixed 500 ms. */
function trackNetwork(page: Page): NetworkTracker {
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
