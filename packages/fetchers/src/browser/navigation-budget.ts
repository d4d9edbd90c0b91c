import type { Frame, Page, Request, Route } from 'playwright-core';

/**
 * Main-frame navigations one render of a page may send to the network: the crawler's own, and up to seven the page
 * starts itself (a meta refresh, a script setting `location` or reloading). A challenge that reloads once or twice,
 * a two-step check, a chain of a few script hops all fit with room to spare; a refresh loop or a crawler trap that
 * goes to `?n+1` forever is stopped there. Each navigation is a request to the site that no politeness gate sees, so
 * this is also the most requests (redirect hops aside, which Chromium caps at 20 per navigation) one fetch sends it.
 */
export const MAX_NAVIGATIONS = 8;

/**
 * Counts the navigations of each frame of a page and, once a frame has used {@link MAX_NAVIGATIONS}, aborts every
 * further one of it before it leaves the browser: the frame stays on the document it shows, as when a navigation ends
 * without a document. An iframe that refreshes itself sends the site requests as the page does, so it gets the same
 * budget. Redirect hops are not navigations of their own. The page's requests are intercepted only from the first
 * navigation a frame starts by itself on: an ordinary page costs nothing but the count.
 */
export class NavigationBudget {
  /** The budget in force on each page: a page rendered again (after a wall's solve) gets a fresh one. */
  static readonly #current = new WeakMap<Page, NavigationBudget>();
  readonly #sent = new Map<Frame, number>();
  #refused = 0;
  #framesRefused = 0;
  #route: ((route: Route) => Promise<void>) | null = null;
  #installing: Promise<void> | null = null;
  /** Navigations counted, by the listener or the route, whichever saw them first: each is counted once. */
  readonly #counted = new WeakSet<Request>();
  readonly #onRequest = (r: Request) => {
    const frame = this.#navigatingFrame(r);
    if (!frame || this.#counted.has(r)) return;
    this.#counted.add(r);
    const sent = this.#count(frame);
    // A frame navigates by itself: from now on each navigation is let through or refused before it is sent.
    if (sent >= 2 && !this.#installing) this.#installing = this.#intercept();
  };

  private constructor(readonly page: Page) {
    const previous = NavigationBudget.#current.get(page);
    if (previous) void previous.#detach();
    NavigationBudget.#current.set(page, this);
    page.on('request', this.#onRequest);
  }

  /** Start counting the page's navigations; the next one (the crawler's `goto`) is the first. */
  static watch(page: Page): NavigationBudget {
    return new NavigationBudget(page);
  }

  /** The main frame's navigations sent to the network (redirect hops not counted). */
  get sent(): number {
    return this.#sent.get(this.page.mainFrame()) ?? 0;
  }

  /** Navigations the page (its main frame) tried past the budget, each aborted before it was sent. */
  get refused(): number {
    return this.#refused;
  }

  /** Navigations iframes tried past their budget, each aborted before it was sent. */
  get framesRefused(): number {
    return this.#framesRefused;
  }

  #count(frame: Frame): number {
    const n = (this.#sent.get(frame) ?? 0) + 1;
    this.#sent.set(frame, n);
    return n;
  }

  async #intercept(): Promise<void> {
    // The listener stays on: a request sent just before the route was in place can have its event delivered after,
    // and it was sent all the same. A request both see is counted by whichever saw it first, and un-counted if the
    // route refuses it.
    const route = async (route: Route) => {
      if (NavigationBudget.#current.get(this.page) !== this) return route.fallback().catch(() => undefined);
      const request = route.request();
      const frame = this.#navigatingFrame(request);
      if (!frame) return route.fallback().catch(() => undefined);
      const counted = this.#counted.has(request);
      if ((this.#sent.get(frame) ?? 0) - (counted ? 1 : 0) >= MAX_NAVIGATIONS) {
        if (counted) this.#sent.set(frame, (this.#sent.get(frame) ?? 1) - 1);
        else this.#counted.add(request);
        if (frame === this.page.mainFrame()) this.#refused += 1;
        else this.#framesRefused += 1;
        // 'aborted' (ERR_ABORTED) leaves the document in place; another error would replace it with Chromium's error page.
        return route.abort('aborted').catch(() => undefined);
      }
      if (!counted) {
        this.#counted.add(request);
        this.#count(frame);
      }
      return route.fallback().catch(() => undefined);
    };
    this.#route = route;
    await this.page.route('**/*', route).catch(() => undefined);
  }

  /** The frame `r` navigates, when it is a navigation of its own (not a redirect hop). */
  #navigatingFrame(r: Request): Frame | null {
    if (!r.isNavigationRequest() || r.redirectedFrom() !== null) return null;
    try {
      return r.frame();
    } catch {
      // A service worker's request has no frame.
      return null;
    }
  }

  /**
   * The render is over. The bound stays in force until the page closes (or renders again under a fresh budget): the
   * fetch closes its page after it returns, and a refresh the page starts in between is a request to the site too.
   */
  async stop(): Promise<void> {
    await this.#installing;
  }

  async #detach(): Promise<void> {
    this.page.off('request', this.#onRequest);
    await this.#installing;
    if (this.#route) await this.page.unroute('**/*', this.#route).catch(() => undefined);
  }
}
