import type { Frame, Page, Request, Response } from 'playwright-core';
import { validateResponseDetailed, type ChallengeKind } from '@crawler/core';

/** One main-frame document the browser landed on (redirect hops excluded). */
export interface LandedDocument {
  url: string;
  status: number;
}

/**
 * What the browser met on the way to the page: a challenge that cleared itself, or one that did not in time. `vendor`
 * and `kind` name the challenge the browser ended on, `firstVendor` and `firstKind` the one it started on (the page
 * plain HTTP meets); they differ when a check led to another one, or turned into a refusal or a captcha.
 */
export interface ChallengeEncounter {
  /**
   * The bot-protection vendor of the last challenge page (`js_cookie_check` for home-grown ones), null when none of
   * the detectors named it: the page returned when it did not clear, the last check before the content when it did.
   */
  vendor: string | null;
  /**
   * What that last challenge page waits for: `interstitial` when it cleared or the wait ran out, the page's own kind
   * when the wait ended on a refusal, a captcha or a waiting room (after a reload, or when the page turned into one).
   */
  kind: ChallengeKind;
  /** The vendor of the first challenge page, when recognised. */
  firstVendor: string | null;
  /**
   * What the first challenge page waits for. Only an `interstitial` is waited on: a first page that is a refusal, a
   * captcha or a waiting room is returned as it rendered, not cleared, with `waitedMs` 0.
   */
  firstKind: ChallengeKind;
  /** The browser left the challenge for a page that is not one within the wait. */
  cleared: boolean;
  /** Milliseconds spent waiting after the challenge page had rendered. */
  waitedMs: number;
  /** Every main-frame document, in order: the challenge first, the content (or the last challenge) last. */
  documents: LandedDocument[];
}

/**
 * Follows the main frame's documents: the latest one is what the page now shows. A main-frame navigation response is
 * only a candidate until the frame commits to it: a download, a 204 or a navigation cut short by another one has a
 * response too, but the page stays on the document it had, so its status and headers are not the page's.
 */
export class DocumentTracker {
  readonly documents: LandedDocument[] = [];
  /** The raw HTML each document was served with (null when unreadable), in the order of `documents`. */
  readonly bodies: Promise<string | null>[] = [];
  /** The Cookie header each document's request carried (null when none), in the order of `documents`. */
  readonly cookies: Promise<string | null>[] = [];
  #last: Response | null = null;
  #pending: { response: Response; body: Promise<string | null>; cookie: Promise<string | null> } | null = null;
  #waiters = new Set<() => void>();
  readonly #onResponse = (r: Response) => {
    const req = r.request();
    if (!req.isNavigationRequest() || r.frame() !== this.page.mainFrame()) return;
    // A redirect hop is not a document; the request it leads to answers again.
    if (r.status() >= 300 && r.status() < 400 && r.headers()['location']) return;
    // A candidate still neither committed-and-finished nor failed when the next document answers was a document all
    // the same (its commit event may come after its response's, or be overtaken): it lands before the newer one.
    if (this.#pending && this.#pending.response.request().failure() === null) this.#land(this.#pending.response);
    // Read now: a quick interstitial is gone (and its body with it) by the time the page has settled.
    this.#pending = { response: r, body: r.text().catch(() => null), cookie: req.headerValue('cookie').catch(() => null) };
  };
  // The commit: the main frame now shows the pending response's document. A same-document navigation (history API,
  // fragment) commits too, with no response and another URL than the pending one's, and changes nothing here.
  readonly #onFrameNavigated = (frame: Frame) => {
    if (frame !== this.page.mainFrame() || !this.#pending) return;
    if (withoutFragment(frame.url()) === withoutFragment(this.#pending.response.url())) this.#land(this.#pending.response);
  };
  // A document's body arrived in full: it was committed even if the commit event came first (the order of the two
  // is Chromium's, not a promise); a download or a 204 ends as a failed request instead and never lands.
  readonly #onRequestFinished = (req: Request) => {
    if (this.#pending && this.#pending.response.request() === req) this.#land(this.#pending.response);
  };
  readonly #onRequestFailed = (req: Request) => {
    if (this.#pending && this.#pending.response.request() === req) this.#pending = null;
  };

  #land(r: Response): void {
    const pending = this.#pending!;
    this.#pending = null;
    this.#last = r;
    this.documents.push({ url: r.url(), status: r.status() });
    this.bodies.push(pending.body);
    this.cookies.push(pending.cookie);
    for (const w of this.#waiters) w();
  }

  constructor(readonly page: Page) {
    page.on('response', this.#onResponse);
    page.on('framenavigated', this.#onFrameNavigated);
    page.on('requestfinished', this.#onRequestFinished);
    page.on('requestfailed', this.#onRequestFailed);
  }

  /** The latest main-frame document response, or null before the first. */
  get last(): Response | null {
    return this.#last;
  }

  /** Resolve true when a document after the `seen`-th arrives, false at `deadline` (epoch ms). */
  async next(seen: number, deadline: number): Promise<boolean> {
    if (this.documents.length > seen) return true;
    return new Promise<boolean>((resolve) => {
      const done = (v: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(v);
      };
      const wake = () => {
        if (this.documents.length > seen) done(true);
      };
      const timer = setTimeout(() => done(this.documents.length > seen), Math.max(0, deadline - Date.now()));
      this.#waiters.add(wake);
    });
  }

  stop(): void {
    this.page.off('response', this.#onResponse);
    this.page.off('framenavigated', this.#onFrameNavigated);
    this.page.off('requestfinished', this.#onRequestFinished);
    this.page.off('requestfailed', this.#onRequestFailed);
  }
}

/** A challenge page as the detector saw it: its vendor, when recognised, and what it waits for. */
export interface RenderedChallenge {
  vendor: string | null;
  kind: ChallengeKind;
}

/**
 * The challenge when `html` (the rendered DOM) served with `status` and `headers` is a challenge page, else undefined.
 * Only challenge pages are waited on: a bare 403 or 429 has no script that could clear it.
 */
export function challengeOf(status: number, headers: Record<string, string>, html: string): RenderedChallenge | undefined {
  return renderedVerdict(status, headers, html).challenge;
}

/** challengeOf, and whether the page has nothing to read, from one parse of the rendered page. */
export function renderedVerdict(status: number, headers: Record<string, string>, html: string): { challenge: RenderedChallenge | undefined; isEmpty: boolean } {
  const { result, challenge } = validateResponseDetailed({ status, headers, body: html });
  // A wall's rate-limit page (a refusal served with 429) is rate_limited, not blocked_captcha, but still a wall's page:
  // named, it is returned at once rather than given an unknown wall's seconds.
  if (result.blockType !== 'blocked_captcha' && !challenge.isChallenge) return { challenge: undefined, isEmpty: result.isEmpty };
  // A 503 that is all script and no signature (a wall family nobody named) is taken for a check that clears itself.
  return { challenge: { vendor: result.blockVendor, kind: challenge.kind ?? 'interstitial' }, isEmpty: result.isEmpty };
}

/**
 * The first challenge among the documents before the last one (a quick interstitial that had already reloaded into
 * content by the time the page settled), judged on the HTML it was served with. A document whose HTML was gone before
 * it could be read (its script replaced it first, or its body never finished), or whose HTML no detector knows (a
 * challenge family we have not met), is judged by what the page did next: see {@link passedWall}. Its vendor is then
 * unknown (null).
 */
export async function earlierChallenge(tracker: Pick<DocumentTracker, 'documents' | 'bodies' | 'cookies'>): Promise<RenderedChallenge | undefined> {
  return (await challengesBefore(tracker))?.first;
}

/**
 * The first and the last challenge among the documents before the last one, each judged as {@link earlierChallenge}
 * judges one: a two-step check (a vendor's interstitial, then the site's own cookie check) is both of its steps.
 */
export async function challengesBefore(tracker: Pick<DocumentTracker, 'documents' | 'bodies' | 'cookies'>): Promise<{ first: RenderedChallenge; last: RenderedChallenge } | undefined> {
  let first: RenderedChallenge | undefined;
  let last: RenderedChallenge | undefined;
  for (let i = 0; i < tracker.documents.length - 1; i++) {
    const body = await tracker.bodies[i];
    // The page got through by itself: whatever the wall was, it cleared itself.
    const found = (typeof body === 'string' ? challengeOf(tracker.documents[i]!.status, { 'content-type': 'text/html' }, body) : undefined) ?? ((await passedWall(tracker, i)) ? { vendor: null, kind: 'interstitial' as const } : undefined);
    if (!found) continue;
    first ??= found;
    last = found;
  }
  return first && last ? { first, last } : undefined;
}

/** Statuses walls answer their interstitials with (managed challenges 403, "checking your browser" 503, 429). */
export const WALL_STATUSES: ReadonlySet<number> = new Set([403, 429, 503]);

/** How long a page no detector knows, answered with a wall's status and carrying a script, is given to clear itself. */
export const UNKNOWN_WALL_WAIT_MS = 3_000;

/**
 * Whether a rendered page no detector recognised could still be a wall that clears itself: it has a script to run, and
 * it was answered with a wall's status or rendered into nothing to read (`isEmpty`, the validation of the rendered
 * page). A wall family we have not met looks like this; a bare 403, or a page with something to read, does not.
 */
export function mayClearItself(status: number, html: string, isEmpty: boolean): boolean {
  return (WALL_STATUSES.has(status) || (status < 300 && isEmpty)) && /<script\b/i.test(html);
}

/**
 * Whether the `i`-th document was a wall the page got through by itself, by what the page did: its own script asked
 * for the same URL again and
 * - the first answer had a wall's status and the second did not (a 503 "checking your browser" reloading into a 200);
 * - or the second request carried a cookie the first did not (the cookie-and-reload check, served with a 200 or an
 *   AWS-style 202 as often as with an error status).
 * A page that sends the reader elsewhere (a 404 or a 403 whose script goes home or to a login, a download page) is
 * neither.
 */
async function passedWall(tracker: Pick<DocumentTracker, 'documents' | 'cookies'>, i: number): Promise<boolean> {
  const doc = tracker.documents[i]!;
  const next = tracker.documents[i + 1]!;
  if (withoutFragment(doc.url) !== withoutFragment(next.url)) return false;
  if (WALL_STATUSES.has(doc.status) && next.status < 400) return true;
  const before = cookiePairs(await tracker.cookies[i]);
  return [...cookiePairs(await tracker.cookies[i + 1])].some((pair) => !before.has(pair));
}

function cookiePairs(header: string | null | undefined): Set<string> {
  return new Set((header ?? '').split(';').map((p) => p.trim()).filter((p) => p.length > 0));
}

/**
 * Wait for the committed document's DOMContentLoaded, or until a navigation the page itself started ends without a
 * document (a download, a 204): Chromium stops parsing a document once a navigation away from it begins, so when that
 * navigation never commits, DOMContentLoaded never comes and the page stays as far as it was parsed. `document` is
 * the committed document's request: its own failure (other than being replaced) rejects with Chromium's error. Rejects
 * as waitForLoadState does when none of these happens within `timeoutMs`.
 */
export async function documentLoaded(page: Page, document: Request, timeoutMs: number): Promise<void> {
  const loaded = page.waitForLoadState('domcontentloaded', { timeout: timeoutMs });
  // The page may be left in place before the wait times out: that rejection then has no reader.
  loaded.catch(() => undefined);
  let onFailed: ((r: Request) => void) | undefined;
  const leftInPlace = new Promise<void>((resolve, reject) => {
    onFailed = (r) => {
      if (!r.isNavigationRequest() || r.frame() !== page.mainFrame()) return;
      if (r !== document) return resolve();
      // The document itself failed after it committed (a body that does not decode, a chunked body cut short): it never
      // reaches DOMContentLoaded, so its error is the fetch's. Aborted means replaced by a navigation: the cases above.
      const why = r.failure()?.errorText ?? '';
      if (why !== '' && !why.includes('ERR_ABORTED')) reject(new Error(`${why} at ${r.url()}`));
    };
    page.on('requestfailed', onFailed);
  });
  leftInPlace.catch(() => undefined);
  try {
    await Promise.race([loaded, leftInPlace]);
  } finally {
    page.off('requestfailed', onFailed!);
  }
}

/**
 * The document's HTML (doctype included, as `page.content()` gives it) with every open shadow root flattened into it.
 * `page.content()` serializes the light DOM only, so the text and links a web component renders in its shadow root (a
 * product card, a comment widget, a design system's whole page) were not in the stored page. As search engines'
 * renderers do, each shadow host's children become its shadow tree, with every `<slot>` holding the light nodes
 * assigned to it (or its fallback). Runs in the page, in one round trip whether or not it has shadow roots.
 */
function flattenedDocument(): string {
  const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
  const root = document.documentElement;
  // A shadow root inside another has a host in the document too. A tree walker, not an array of every element: on a
  // page of 500,000 elements copying them into an array took half a second, the walk a few dozen milliseconds.
  let hasShadow = false;
  if (root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let el: Node | null = walker.currentNode; el !== null && !hasShadow; el = walker.nextNode()) hasShadow = (el as Element).shadowRoot !== null;
  }
  if (!root || !hasShadow) return doctype + (root?.outerHTML ?? '');
  const flat = (node: Node): Node => {
    if (!(node instanceof Element)) return node.cloneNode(false);
    const copy = node.cloneNode(false) as Element;
    let children: ArrayLike<Node> = node.childNodes;
    if (node.shadowRoot) children = node.shadowRoot.childNodes;
    else if (node instanceof HTMLSlotElement) {
      const assigned = node.assignedNodes();
      if (assigned.length > 0) children = assigned;
    }
    for (const child of Array.from(children)) copy.appendChild(flat(child));
    return copy;
  };
  return doctype + (flat(root) as Element).outerHTML;
}

/** The page's HTML, retried while a navigation is replacing the document (content() fails mid-navigation). */
export async function settledContent(page: Page, deadline: number): Promise<string> {
  for (;;) {
    try {
      // In the page's own world, whose globals a script may have broken: then Playwright's serializer, light DOM only.
      const html = await page.evaluate(flattenedDocument).catch(() => null);
      return typeof html === 'string' ? html : await page.content();
    } catch (err) {
      if (Date.now() >= deadline || page.isClosed()) throw err;
      await page.waitForLoadState('domcontentloaded', { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
    }
  }
}

function withoutFragment(url: string): string {
  const i = url.indexOf('#');
  return i === -1 ? url : url.slice(0, i);
}
