import type { Page, Response } from 'playwright-core';
import { CrawlerError, FETCHERS } from '@crawler/core';
import { BaseFetcher, type PreparedRequest } from '../base-fetcher.js';
import type { FetchResult, Fetcher } from '../contract.js';
import { FetchError } from '../errors.js';
import { resolveFetchersOptions, type FetchersOptions, type ResolvedFetchersOptions } from '../options.js';
import { mimeTypeOf } from '../http/decode.js';
import { assertAllowedTarget, type AddressPolicy } from '../http/ssrf.js';
import { BrowserPool, exitIdOf, samePolicy, type ContextFactory } from './browser-pool.js';
import { translatePlaywrightError } from './translate-error.js';
import { HttpFetcher } from '../http/http-fetcher.js';
import { fileAt, requestFile, watchDownloads, type FileAtUrl } from './file-request.js';
import { NavigationBudget } from './navigation-budget.js';
import { refusalFor, whenRefused, type RequestPolicy } from './request-policy.js';
import type { ClearanceStore } from './clearance-store.js';
import { solveScopeOf } from './solve-flights.js';
import { DocumentTracker, UNKNOWN_WALL_WAIT_MS, WALL_STATUSES, challengeOf, documentLoaded, challengesBefore, earlierChallenge, mayClearItself, renderedVerdict, settledContent } from './challenge-wait.js';
import { fetcherContexts, plainHooks, type BrowserHooks } from './browser-contexts.js';
import { isDownloadStart, trackNetwork, watchNoContent } from './page-watchers.js';
import { RENDERED_TYPES, noDocumentResult, redirectChainOf, renderedResult, servedInstead } from './rendered-result.js';
import { waitOutChallenge } from './wait-out-challenge.js';
import { WallSolves, type SolveTurn, type SolveWait } from './wall-solves.js';

export { plainHooks, type BrowserHooks };

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
  readonly #solves: WallSolves;
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
    this.#contexts = fetcherContexts({ hooks, requests, policy: this.#policy, log: this.log, clearance: deps.clearance, flavour: this.name });
    this.#solves = new WallSolves(deps.clearance, this.log, options.browser.challengeWaitMs);
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
    const inFlight = this.#solves.current(turn.scope);
    const earlier = inFlight?.site === site ? await this.#solves.awaitSolve(turn, inFlight.result, req) : null;
    try {
      const result = await this.#pool.withPage(
        site,
        this.#contexts,
        req.signal,
        async (page) => {
          await this.#solves.useClearance(page, earlier);
          let r = await this.#render(page, req, turn);
          while ('waitFor' in r) {
            await this.#solves.useClearance(page, await r.waitFor);
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
      await this.#solves.endSolve(turn, null);
    }
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
        return await noDocumentResult(this.name, req, empty);
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
      if (html.length > req.maxBytes && (shownType === null || RENDERED_TYPES.has(shownType))) return await servedInstead(current, req, this.name);
      const { challenge, isEmpty } = renderedVerdict(current.status(), headers, html);
      // A check may already have reloaded into this challenge (a refusal after a JS check) before the first look: the
      // encounter started on that check.
      const first = challenge && documents.documents.length > 1 ? await earlierChallenge(documents) : undefined;
      if (challenge?.kind === 'interstitial' && !turn.lead) {
        const other = await this.#solves.solveOrWait(current.request(), turn, req);
        if (other) {
          // Off the challenge before its script solves it too; the page renders again with the solver's clearance.
          await page.goto('about:blank').catch(() => undefined);
          return other;
        }
      }
      let encounter = challenge ? await waitOutChallenge(page, documents, network, navigations, challenge, first ?? challenge, current, deadline, () => downloads.last !== null, this.options.browser, this.log) : null;
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
        await this.#solves.endSolve(turn, await this.#solves.shareClearance(page, turn));
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
        await this.#solves.endSolve(turn, encounter.cleared ? await this.#solves.shareClearance(page, turn) : null);
      }
      // Every hop, and every reload, went through the egress proxy, which checked its address before connecting and
      // answers a refusal with a 204 that never becomes a document; a marked document here is the proxy failing.
      const refusedLater = this.#pool.egressErrorOf(headers, current.url()) ?? refusalFor(page);
      if (refusedLater) throw refusedLater;
      return await renderedResult(page, req, this.name, { current, html, headers, encounter });
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
