import { describe, expect, it } from 'vitest';
import type { Cookie } from 'playwright-core';
import { SolveFlights, waitForSolve } from './solve-flights.js';

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
