import type { Cookie, Request } from 'playwright-core';
import { BoundedMap } from '@crawler/core';
import { cookieMatchesHost } from './clearance-store.js';

/** How a flight ended: the clearance cookies its solver earned, or null when it earned none. */
export type SolveResult = Cookie[] | null;

/**
 * Walls being solved in this process, one solver per clearance scope: a page that meets a wall another page of the
 * same scope is already solving waits for that solve's cookies instead of solving the wall itself.
 */
export class SolveFlights {
  readonly #flights = new Map<string, Promise<SolveResult>>();
  // The clearance of each scope's last solve, for a page whose request left before it arrived (as many sites as the
  // pool keeps cookie jars for).
  readonly #solved = new BoundedMap<string, Cookie[]>(1_000);

  /** The solve in flight for `scope`, if any. */
  current(scope: string): Promise<SolveResult> | undefined {
    return this.#flights.get(scope);
  }

  /** The clearance `scope`'s last solve in this process earned, if any. */
  lastSolved(scope: string): Cookie[] | undefined {
    return this.#solved.get(scope);
  }

  /**
   * Become `scope`'s solver. The returned `settle` ends the flight (its waiters get `result`); later calls do nothing.
   * Synchronous from check to claim, so of pages meeting a wall together exactly one becomes the solver.
   */
  start(scope: string): (result: SolveResult) => void {
    let resolve!: (r: SolveResult) => void;
    const flight = new Promise<SolveResult>((r) => (resolve = r));
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

/**
 * Whether `request` went out without some of `cookies` (by name and value): a wall it met may be one they clear. The
 * request's Cookie header is what counts, not its context's jar: a page whose request left before another page's
 * clearance arrived met the wall with a jar that holds the clearance now.
 */
export async function sentWithout(request: Request, cookies: readonly Cookie[]): Promise<boolean> {
  // Only the cookies the request's host is sent count: a host-only cookie of another host was never going to be.
  cookies = forHost(cookies, hostOf(request.url()));
  if (cookies.length === 0) return false;
  const header = (await request.allHeaders().catch(() => ({}) as Record<string, string>))['cookie'] ?? '';
  const sent = new Set(header.split(';').map((p) => p.trim()));
  return cookies.some((c) => !sent.has(`${c.name}=${c.value}`));
}

/** The cookies of `cookies` a browser sends to `host` (RFC 6265 domain-match; host-only ones to their own host only). */
export function forHost(cookies: readonly Cookie[], host: string): Cookie[] {
  return cookies.filter((c) => cookieMatchesHost(c, host));
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
