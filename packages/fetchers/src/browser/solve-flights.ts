import type { Cookie, Request } from 'playwright-core';
import { BoundedMap, registrableDomainOf } from '@crawler/core';
import { cookieMatchesHost } from './clearance-store.js';

/** How a flight ended: the clearance cookies its solver earned, or null when it earned none. */
export type SolveResult = Cookie[] | null;

/** A solve in flight: the site whose page solves, and its end. */
export interface Flight {
  site: string;
  result: Promise<SolveResult>;
}

/**
 * Walls being solved in this process, one solver per clearance scope (a registrable domain and a flavour): a page
 * that meets a wall another page of the same scope is already solving waits for that solve's cookies instead of
 * solving the wall itself. Which of the cookies a waiting page may use is its host's to judge (`forSite`).
 */
export class SolveFlights {
  readonly #flights = new Map<string, Flight>();
  // The clearance of each scope's last solve, for a page whose request left before it arrived (as many sites as the
  // pool keeps cookie jars for).
  readonly #solved = new BoundedMap<string, Cookie[]>(1_000);

  /** The solve in flight for `scope`, if any. */
  current(scope: string): Flight | undefined {
    return this.#flights.get(scope);
  }

  /** The clearance `scope`'s last solve in this process earned, if any. */
  lastSolved(scope: string): Cookie[] | undefined {
    return this.#solved.get(scope);
  }

  /**
   * Become `scope`'s solver, on a page of `site`. The returned `settle` ends the flight (its waiters get `result`);
   * later calls do nothing. Synchronous from check to claim, so of pages meeting a wall together exactly one becomes
   * the solver.
   */
  start(scope: string, site: string): (result: SolveResult) => void {
    let resolve!: (r: SolveResult) => void;
    const flight: Flight = { site, result: new Promise<SolveResult>((r) => (resolve = r)) };
    this.#flights.set(scope, flight);
    let settled = false;
    return (result) => {
      if (settled) return;
      settled = true;
      if (this.#flights.get(scope) === flight) this.#flights.delete(scope);
      if (result && result.length > 0) this.#solved.set(scope, result);
      resolve(result);
    };
  }
}

/** `flight`'s result, or null once `untilMs` (epoch ms) passes or `signal` aborts first. */
export async function waitForSolve(flight: Promise<SolveResult>, untilMs: number, signal: AbortSignal): Promise<SolveResult> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const giveUp = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), Math.max(0, untilMs - Date.now()));
    onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([flight, giveUp]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** The cookies a request went out with: its host, and its Cookie header's `name=value` pairs. */
export interface SentCookies {
  host: string;
  pairs: ReadonlySet<string>;
}

/** What `request` sent: read while the request is the page's latest (a later navigation may drop its headers). */
export async function sentCookiesOf(request: Request): Promise<SentCookies> {
  const header = (await request.allHeaders().catch(() => ({}) as Record<string, string>))['cookie'] ?? '';
  return { host: hostOf(request.url()), pairs: new Set(header.split(';').map((p) => p.trim())) };
}

/**
 * Whether a request that sent `sent` went out without some of `cookies` (by name and value): a wall it met may be one
 * they clear. The request's Cookie header is what counts, not its context's jar: a page whose request left before
 * another page's clearance arrived met the wall with a jar that holds the clearance now.
 */
export function wentWithout(sent: SentCookies, cookies: readonly Cookie[]): boolean {
  // Only the cookies the request's host is sent count: a host-only cookie of another host was never going to be.
  return forHost(cookies, sent.host).some((c) => !sent.pairs.has(`${c.name}=${c.value}`));
}

/** `wentWithout` for `request`, read now. */
export async function sentWithout(request: Request, cookies: readonly Cookie[]): Promise<boolean> {
  if (forHost(cookies, hostOf(request.url())).length === 0) return false;
  return wentWithout(await sentCookiesOf(request), cookies);
}

/** The cookies of `cookies` a browser sends to `host` (RFC 6265 domain-match; host-only ones to their own host only). */
export function forHost(cookies: readonly Cookie[], host: string): Cookie[] {
  return cookies.filter((c) => cookieMatchesHost(c, host));
}

/** The cookies of `cookies` a context for `site` (a host without `www.`) sends to the site or to `www.<site>`. */
export function forSite(cookies: readonly Cookie[], site: string): Cookie[] {
  return cookies.filter((c) => cookieMatchesHost(c, site) || cookieMatchesHost(c, `www.${site}`));
}

/** The single-flight scope of a wall met on `site` for `flavour`: the site's registrable domain (its own name when it has none, an IP). */
export function solveScopeOf(site: string, flavour: string): string {
  return `${registrableDomainOf(site) ?? site}|${flavour}`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
