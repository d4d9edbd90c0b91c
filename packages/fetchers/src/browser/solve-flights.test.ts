import { describe, expect, it } from 'vitest';
import type { Cookie, Request } from 'playwright-core';
import { SolveFlights, sentWithout, waitForSolve } from './solve-flights.js';

const cookie = (value: string): Cookie => ({ name: 'clearance', value, domain: 'example.com', path: '/', expires: -1, httpOnly: false, secure: false, sameSite: 'Lax' });

describe('SolveFlights', () => {
  it('has one flight per scope: waiters get the solver\'s cookies, and the flight ends with its settle', async () => {
    const flights = new SolveFlights();
    const settle = flights.start('a|playwright');
    const waiting = flights.current('a|playwright');
    expect(waiting).toBeDefined();
    expect(flights.current('b|playwright')).toBeUndefined();
    settle([cookie('1')]);
    settle(null);
    await expect(waiting).resolves.toEqual([cookie('1')]);
    expect(flights.current('a|playwright')).toBeUndefined();
    expect(flights.lastSolved('a|playwright')).toEqual([cookie('1')]);
  });

  it('a failed solve leaves no clearance to reuse', async () => {
    const flights = new SolveFlights();
    flights.start('a|playwright')(null);
    expect(flights.lastSolved('a|playwright')).toBeUndefined();
  });

  it('a wait for a solve that does not end gives up at its bound, or when its fetch is aborted', async () => {
    const never = new Promise<null>(() => undefined);
    await expect(waitForSolve(never, Date.now() + 20, new AbortController().signal)).resolves.toBeNull();
    const aborted = new AbortController();
    const waiting = waitForSolve(never, Date.now() + 60_000, aborted.signal);
    aborted.abort();
    await expect(waiting).resolves.toBeNull();
  });
});

describe('sentWithout', () => {
  const request = (url: string, cookieHeader: string): Request => ({ url: () => url, allHeaders: async () => ({ cookie: cookieHeader }) }) as unknown as Request;
  const at = (name: string, domain: string): Cookie => ({ ...cookie('1'), name, domain });

  it('counts only the cookies the request\'s host is sent: another host\'s clearance is not one it went without', async () => {
    const solved = [at('cf', '.example.com'), at('apex', 'example.com'), at('other', 'other.net')];
    // www.example.com is sent the domain cookie, not the apex's host-only one nor another site's.
    await expect(sentWithout(request('https://www.example.com/a', 'cf=1'), solved)).resolves.toBe(false);
    await expect(sentWithout(request('https://www.example.com/a', 'x=1'), solved)).resolves.toBe(true);
    await expect(sentWithout(request('https://example.com/a', 'cf=1'), solved)).resolves.toBe(true);
    await expect(sentWithout(request('https://example.com/a', 'cf=1; apex=1'), solved)).resolves.toBe(false);
  });
});
