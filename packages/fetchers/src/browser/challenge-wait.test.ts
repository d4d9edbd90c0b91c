import { describe, expect, it } from 'vitest';
import { challengesBefore, earlierChallenge, mayClearItself, renderedVerdict } from './challenge-wait.js';

/** A tracker's record of the documents a page landed on: URL, status, served HTML (null: unreadable), Cookie header. */
function landed(...docs: Array<[url: string, status: number, body: string | null, cookie: string | null]>) {
  return {
    documents: docs.map(([url, status]) => ({ url, status })),
    bodies: docs.map(([, , body]) => Promise.resolve(body)),
    cookies: docs.map(([, , , cookie]) => Promise.resolve(cookie)),
  };
}

const U = 'https://shop.example/p/1';
const ARTICLE = `<html><head><title>Shoes</title></head><body><article>${'<p>Plain prose about shoes and how they are made.</p>'.repeat(20)}</article></body></html>`;
const CF = '<html><head><title>Just a moment...</title></head><body><div id="challenge-stage"></div><script>window._cf_chl_opt={cType:"managed"}</script></body></html>';

describe('earlierChallenge', () => {
  it('names a recognised wall by the HTML it was served with', async () => {
    expect(await earlierChallenge(landed([U, 403, CF, null], [U, 200, ARTICLE, 'cf_clearance=x']))).toEqual({ vendor: 'cloudflare', kind: 'interstitial' });
  });

  it('judges an unread or unknown wall by what the page did: the same URL again, past a wall status or with a new cookie', async () => {
    expect(await earlierChallenge(landed([U, 503, null, null], [U, 200, ARTICLE, null]))).toEqual({ vendor: null, kind: 'interstitial' });
    expect(await earlierChallenge(landed([U, 200, null, 'a=1'], [U, 200, ARTICLE, 'a=1; t=9']))).toEqual({ vendor: null, kind: 'interstitial' });
    // Read, and no detector knows it: the same judgement. A fragment is the same URL.
    expect(await earlierChallenge(landed([U, 200, '<p>Hold on.</p>', null], [`${U}#top`, 200, ARTICLE, 't=9']))).toEqual({ vendor: null, kind: 'interstitial' });
  });

  it('sees no wall when the page went elsewhere, or came back with the cookies it had', async () => {
    expect(await earlierChallenge(landed([U, 403, null, null], ['https://shop.example/login', 200, ARTICLE, 't=9']))).toBeUndefined();
    // The same cookies in another order, or a reload that failed again, are no sign of a wall passed.
    expect(await earlierChallenge(landed([U, 200, null, 'a=1; b=2'], [U, 200, ARTICLE, 'b=2; a=1']))).toBeUndefined();
    expect(await earlierChallenge(landed([U, 503, null, null], [U, 503, '<p>Down</p>', null]))).toBeUndefined();
    expect(await earlierChallenge(landed([U, 200, ARTICLE, null]))).toBeUndefined();
  });
});

describe('challengesBefore', () => {
  const CHECK = '<html><head><title>One moment</title></head><body><script>document.cookie = "t=9; path=/"; location.reload();</script></body></html>';

  it('names the first wall and the last one before the content: a two-step check is not recorded as its first step alone', async () => {
    expect(await challengesBefore(landed([U, 403, CF, null], [U, 503, CHECK, 'cf_clearance=x'], [U, 200, ARTICLE, 'cf_clearance=x; t=9']))).toEqual({
      first: { vendor: 'cloudflare', kind: 'interstitial' },
      last: { vendor: 'js_cookie_check', kind: 'interstitial' },
    });
    // One wall: it is both.
    expect(await challengesBefore(landed([U, 403, CF, null], [U, 200, ARTICLE, 'cf_clearance=x']))).toEqual({
      first: { vendor: 'cloudflare', kind: 'interstitial' },
      last: { vendor: 'cloudflare', kind: 'interstitial' },
    });
    expect(await challengesBefore(landed([U, 200, ARTICLE, null]))).toBeUndefined();
  });
});

describe('mayClearItself', () => {
  it('waits only on a page with a script that came with a wall status or has nothing to read', () => {
    const script = '<script>setTimeout(function () {}, 1)</script>';
    expect(mayClearItself(403, `<p>x</p>${script}`, false)).toBe(true);
    expect(mayClearItself(200, script, true)).toBe(true);
    expect(mayClearItself(200, `${ARTICLE}${script}`, false)).toBe(false);
    expect(mayClearItself(403, '<p>Forbidden</p>', true)).toBe(false);
    expect(mayClearItself(404, script, true)).toBe(false);
  });
});

describe('renderedVerdict', () => {
  it("names a wall's rate-limit page (a refusal with 429) as the refusal it is, so the browser neither waits on it nor takes it for an unknown wall", () => {
    // Cloudflare's 1015 carries the small script that reveals the visitor's address: a page with a script and a wall
    // status, which an unknown wall would be given seconds to clear.
    const page = '<html><head><title>Access denied | shop.example used Cloudflare to restrict access</title></head><body><div id="cf-error-details"><h1>Error 1015</h1><h2>You are being rate limited</h2><p>The owner of this website (shop.example) has banned you temporarily from accessing this website.</p><p>Cloudflare Ray ID: 8a1b2c3d4e5f6a7b</p><button id="cf-footer-ip-reveal">Click to reveal</button></div><script>document.getElementById("cf-footer-ip-reveal").onclick=function(){}</script></body></html>';
    expect(renderedVerdict(429, { 'content-type': 'text/html', server: 'cloudflare' }, page).challenge).toEqual({ vendor: 'cloudflare', kind: 'refusal' });
    expect(renderedVerdict(429, { 'content-type': 'text/html' }, ARTICLE).challenge).toBeUndefined();
  });
});
