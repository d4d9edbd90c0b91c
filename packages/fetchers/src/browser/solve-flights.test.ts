import { describe, expect, it } from 'vitest';
import type { Cookie, Request } from 'playwright-core';
import { SolveFlights, forSite, sentWithout, solveScopeOf, waitForSolve } from './solve-flights.js';

const cookie = (value: string): Cookie => ({ name: 'clearance', value, domain: 'example.com', path: '/', expires: -1, httpOnly: false, secure: false, sameSite: 'Lax' });

describe('SolveFlights', () => {
  it('has one flight per scope: waiters get the solver\'s cookies, and the flight ends with its settle', async () => {
    const flights = new SolveFlights();
    const settle = flights.start('a|playwright', 'a');
    const waiting = flights.current('a|playwright')?.result;
    expect(flights.current('a|playwright')?.site).toBe('a');
    expect(flights.current('b|playwright')).toBeUndefined();
    settle([cookie('1')]);
    settle(null);
    await expect(waiting).resolves.toEqual([cookie('1')]);
    expect(flights.current('a|playwright')).toBeUndefined();
    expect(flights.lastSolved('a|playwright')).toEqual([cookie('1')]);
  });

  it('a failed solve leaves no clearance to reuse', async () => {
    const flights = new SolveFlights();
    flights.start('a|playwright', 'a')(null);
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

describe('the single-flight scope and what a waiting site takes', () => {
  it('sibling hosts share a scope (registrable domain, public-suffix aware); flavours and other domains do not', () => {
    expect(solveScopeOf('shop.example.com', 'playwright')).toBe(solveScopeOf('example.com', 'playwright'));
    expect(solveScopeOf('img.shop.example', 'playwright')).toBe(solveScopeOf('shop.example', 'playwright'));
    expect(solveScopeOf('shop.example.com', 'playwright')).not.toBe(solveScopeOf('shop.example.com', 'playwright@exit-1'));
    expect(solveScopeOf('a.github.io', 'playwright')).not.toBe(solveScopeOf('b.github.io', 'playwright'));
    expect(solveScopeOf('a.co.uk', 'playwright')).not.toBe(solveScopeOf('b.co.uk', 'playwright'));
    expect(solveScopeOf('127.0.0.1', 'playwright')).toBe('127.0.0.1|playwright');
  });

  it('a site takes the cookies it or its www host is sent: a Domain one, its own host-only ones, no sibling\'s', () => {
    const at = (name: string, domain: string): Cookie => ({ ...cookie('1'), name, domain });
    const solved = [at('cf', '.example.com'), at('www_only', 'www.example.com'), at('shop_only', 'shop.example.com')];
    expect(forSite(solved, 'example.com').map((c) => c.name)).toEqual(['cf', 'www_only']);
    expect(forSite(solved, 'shop.example.com').map((c) => c.name)).toEqual(['cf', 'shop_only']);
    expect(forSite(solved, 'img.example.com').map((c) => c.name)).toEqual(['cf']);
    expect(forSite([at('www_only', 'www.example.com')], 'img.example.com')).toEqual([]);
  });
});
