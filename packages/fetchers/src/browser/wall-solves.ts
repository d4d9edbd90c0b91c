import type { Page, Request } from 'playwright-core';
import { registrableDomainOf, type Logger } from '@crawler/core';
import type { PreparedRequest } from '../base-fetcher.js';
import { cookieWithin, type ClearanceStore } from './clearance-store.js';
import { SolveFlights, forSite, sentCookiesOf, waitForSolve, wentWithout, type Flight, type SentCookies, type SolveResult } from './solve-flights.js';

// How often a page waiting for another worker's solve asks Redis whether the solve is over (one GET).
const FLEET_SOLVE_POLL_MS = 250;

/** One fetch's part in solving its site's wall: waiting for another page's solve, or solving it for the others. */
export interface SolveTurn {
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
export interface SolveWait {
  waitFor: Promise<SolveResult>;
}

/**
 * A fetcher's pages solving the walls they meet together: a page waits for a solve in flight (in this process, or in
 * another worker holding the fleet's claim) or solves for the others, and shares the clearance it earns.
 */
export class WallSolves {
  readonly #flights = new SolveFlights();
  readonly #clearance: ClearanceStore | undefined;
  readonly #log: Logger;
  readonly #challengeWaitMs: number;

  /** `clearance`: where earned clearance is shared with the fleet; `challengeWaitMs` bounds a page's wait for another's solve. */
  constructor(clearance: ClearanceStore | undefined, log: Logger, challengeWaitMs: number) {
    this.#clearance = clearance;
    this.#log = log;
    this.#challengeWaitMs = challengeWaitMs;
  }

  /** The solve in flight in this process for `scope`, if any. */
  current(scope: string): Flight | undefined {
    return this.#flights.current(scope);
  }

  /** How long a page may wait for another's solve: the challenge wait, and never more than half the fetch's time left (the rest is for its own solve if that one fails). */
  #solveWaitUntil(req: PreparedRequest): number {
    const now = Date.now();
    return now + Math.min(this.#challengeWaitMs, Math.max(0, (req.startedAt + req.timeoutMs - now) / 2));
  }

  /**
   * Wait (bounded by the page's wait deadline) for another page's solve: the cookies of its clearance this page's site
   * is sent, or null. A solve whose clearance reaches only other hosts leaves the page free to wait or solve again.
   */
  async awaitSolve(turn: SolveTurn, solve: Promise<SolveResult>, req: PreparedRequest): Promise<SolveResult> {
    turn.mayWait = false;
    const until = (turn.waitUntil ??= this.#solveWaitUntil(req));
    const result = await waitForSolve(solve, until, req.signal);
    const mine = result ? forSite(result, turn.site) : [];
    if (mine.length > 0) return mine;
    if (result && Date.now() < until && !req.signal.aborted) turn.mayWait = true;
    return null;
  }

  /** Give `page`'s context the clearance another page earned, if any. */
  async useClearance(page: Page, cookies: SolveResult): Promise<void> {
    if (cookies && cookies.length > 0) await page.context().addCookies(cookies).catch((err: unknown) => this.#log.debug({ err }, 'could not use the clearance another page earned'));
  }

  /**
   * The page met a wall that clears itself. Another page of its scope is solving it (in this process, or in another
   * worker holding the fleet's claim): the wait for that solve. Otherwise null, and this page is the solver the
   * others wait for.
   */
  async solveOrWait(walled: Request, turn: SolveTurn, req: PreparedRequest): Promise<SolveWait | null> {
    const sent = await sentCookiesOf(walled);
    // Solved here after this page's request left: its clearance, not a new solve.
    const solved = turn.mayWait ? this.#flights.lastSolved(turn.scope) : undefined;
    if (solved && wentWithout(sent, solved)) {
      turn.mayWait = false;
      return { waitFor: Promise.resolve(forSite(solved, turn.site)) };
    }
    // From this check to the start of a flight nothing awaits: of the pages meeting the wall together, one solves.
    const inFlight = turn.mayWait ? this.#flights.current(turn.scope) : undefined;
    if (inFlight) return { waitFor: this.awaitSolve(turn, inFlight.result, req) };
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
      this.#log.warn({ err, site: turn.site }, 'could not claim solving the wall: solving it without the fleet');
      return null;
    }
    if (release) {
      turn.lead.release = release;
      // A worker may have finished solving after this page's request left: its clearance, not a new solve.
      const stored = await store.load(turn.site, turn.flavour).catch(() => []);
      if (!wentWithout(sent, stored)) return null;
      await this.endSolve(turn, stored);
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
      await this.endSolve(turn, null);
      return null;
    }
    const cookies = await store.load(turn.site, turn.flavour).catch(() => []);
    const fresh = wentWithout(sent, cookies);
    // An empty clearance sends this process's waiters of the domain on to the next solve, as it does this page.
    await this.endSolve(turn, fresh ? cookies : []);
    if (fresh) return cookies;
    if (Date.now() < until && !req.signal.aborted) turn.mayWait = true;
    return null;
  }

  /** This page's solve is over: the fleet's claim is released (after the clearance was saved), and its waiters get `result`. */
  async endSolve(turn: SolveTurn, result: SolveResult): Promise<void> {
    const lead = turn.lead;
    if (!lead) return;
    turn.lead = undefined;
    try {
      await lead.release?.();
    } catch (err) {
      this.#log.warn({ err, site: turn.site }, 'could not release the claim on solving the wall (it expires by itself)');
    }
    lead.settle(result);
  }

  /** The page passed a wall: its context's cookies are the clearance the site's other pages, and the rest of the fleet, can start with. */
  async shareClearance(page: Page, turn: SolveTurn): Promise<SolveResult> {
    const cookies = await page
      .context()
      .cookies()
      .catch(() => null);
    if (!cookies) return null;
    if (this.#clearance) {
      try {
        await this.#clearance.save(turn.site, turn.flavour, cookies);
      } catch (err) {
        this.#log.warn({ err, site: turn.site }, 'could not share clearance');
      }
    }
    // The domain's pages wait for its cookies, not the whole jar (a third party's cookie is no clearance); each takes
    // the ones its host is sent (awaitSolve), and a host they do not reach solves for itself.
    const domain = registrableDomainOf(turn.site) ?? turn.site;
    return cookies.filter((c) => cookieWithin(c, domain));
  }
}
