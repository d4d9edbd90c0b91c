import type { Page, Request, Route } from 'playwright-core';

/**
 * Main-frame navigations one render of a page may send to the network: the crawler's own, and up to seven the page
 * starts itself (a meta refresh, a script setting `location` or reloading). A challenge that reloads once or twice,
 * a two-step check, a chain of a few script hops all fit with room to spare; a refresh loop or a crawler trap that
 * goes to `?n+1` forever is stopped there. Each navigation is a request to the site that no politeness gate sees, so
 * this is also the most requests (redirect hops aside, which Chromium caps at 20 per navigation) one fetch sends it.
 */
export const MAX_NAVIGATIONS = 8;

/**
 * Counts the main-frame navigations of a page and, once it has used {@link MAX_NAVIGATIONS}, aborts every further one
 * before it leaves the browser: the page stays on the document it shows, as when a navigation ends without a
 * document. Redirect hops are not navigations of their own. The page's requests are intercepted only from its first
 * navigation of its own on: an ordinary page costs nothing but the count.
 */
export class NavigationBudget {
  #sent = 0;
  #refused = 0;
  #route: ((route: Route) => Promise<void>) | null = null;
  #installing: Promise<void> | null = null;
  readonly #onRequest = (r: Request) => {
    if (!this.#isNavigation(r)) return;
    this.#sent += 1;
    // The page navigates by itself: from now on each navigation is let through or refused before it is sent.
    if (this.#sent >= 2 && !this.#installing) this.#installing = this.#intercept();
  };

  private constructor(readonly page: Page) {
    page.on('request', this.#onRequest);
  }

  /** Start counting the page's navigations; the next one (the crawler's `goto`) is the first. */
  static watch(page: Page): NavigationBudget {
    return new NavigationBudget(page);
  }

  /** Navigations sent to the network (redirect hops not counted). */
  get sent(): number {
    return this.#sent;
  }

  /** Navigations the page tried past the budget, each aborted before it was sent. */
  get refused(): number {
    return this.#refused;
  }

  async #intercept(): Promise<void> {
    // Requests seen by the listener until the route is in place were sent; after it, the route counts them.
    const route = async (route: Route) => {
      const r = route.request();
      if (!this.#isNavigation(r)) return route.fallback().catch(() => undefined);
      if (this.#sent >= MAX_NAVIGATIONS) {
        this.#refused += 1;
        // 'aborted' (ERR_ABORTED) leaves the document in place; another error would replace it with Chromium's error page.
        return route.abort('aborted').catch(() => undefined);
      }
      this.#sent += 1;
      return route.fallback().catch(() => undefined);
    };
    this.#route = route;
    await this.page.route('**/*', route).catch(() => undefined);
    this.page.off('request', this.#onRequest);
  }

  #isNavigation(r: Request): boolean {
    if (!r.isNavigationRequest() || r.redirectedFrom() !== null) return false;
    try {
      return r.frame() === this.page.mainFrame();
    } catch {
      // A service worker's request has no frame.
      return false;
    }
  }

  /** Stop counting and intercepting (the page may already be closed). */
  async stop(): Promise<void> {
    this.page.off('request', this.#onRequest);
    await this.#installing;
    if (this.#route) await this.page.unroute('**/*', this.#route).catch(() => undefined);
  }
}
