import { describe, expect, it } from 'vitest';
import { earlierChallenge, mayClearItself } from './challenge-wait.js';

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
