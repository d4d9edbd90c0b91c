import { describe, expect, it } from 'vitest';
import { classifyProbe } from './classify-probe.js';

const H = { 'content-type': 'text/html' };
const article = `<html><body><article>${'A real paragraph of text. '.repeat(40)}</article></body></html>`;

describe('classifyProbe (the reuse matrix)', () => {
  it('static HTML → simple_http, reuse', () => {
    expect(classifyProbe({ response: { status: 200, headers: H, body: article } })).toMatchObject({ fetcher: 'simple_http', reuse: true, reason: 'static_html' });
  });
  it('challenge → playwright_stealth, no reuse', () => {
    const r = classifyProbe({ response: { status: 403, headers: { ...H, 'cf-mitigated': 'challenge' }, body: '<title>Just a moment...</title>' } });
    expect(r).toMatchObject({ fetcher: 'playwright_stealth', reuse: false, reason: 'blocked_captcha' });
    expect(r.validation?.blockVendor).toBe('cloudflare');
  });
  it('bare 403 → playwright_stealth, no reuse', () => {
    expect(classifyProbe({ response: { status: 403, headers: H, body: article } })).toMatchObject({ fetcher: 'playwright_stealth', reuse: false, reason: 'blocked_403' });
  });
  it('a rate limit (429, or 503 with a readable Retry-After) stays with plain HTTP: pace, not another tool', () => {
    const limited = { fetcher: 'simple_http', reuse: false, reason: 'rate_limited' };
    expect(classifyProbe({ response: { status: 429, headers: H, body: article } })).toMatchObject(limited);
    expect(classifyProbe({ response: { status: 429, headers: { ...H, 'retry-after': '60' }, body: '' } })).toMatchObject(limited);
    expect(classifyProbe({ response: { status: 503, headers: { ...H, 'Retry-After': 'Wed, 21 Oct 2026 07:28:00 GMT' }, body: article } })).toMatchObject(limited);
    // Without a (readable) Retry-After a 503 is the server's trouble, not a request for pace.
    expect(classifyProbe({ response: { status: 503, headers: H, body: article } })).toMatchObject({ fetcher: 'simple_http', reason: 'http_503' });
    expect(classifyProbe({ response: { status: 503, headers: { ...H, 'retry-after': 'soon' }, body: article } })).toMatchObject({ reason: 'http_503' });
  });
  it('a challenge page served with 429 or 503 is a challenge, not a rate limit', () => {
    const body = '<html><head><title>Just a moment...</title></head><body><div id="challenge-stage"></div><script>window._cf_chl_opt={cType:"managed"}</script></body></html>';
    for (const status of [429, 503]) {
      expect(classifyProbe({ response: { status, headers: { ...H, server: 'cloudflare', 'retry-after': '5' }, body } })).toMatchObject({ fetcher: 'playwright_stealth', reason: 'blocked_captcha' });
    }
  });
  it('SPA shell → playwright, no reuse', () => {
    const body = '<html><body><div id="app"></div><script src="/app.js"></script></body></html>';
    expect(classifyProbe({ response: { status: 200, headers: H, body } })).toMatchObject({ fetcher: 'playwright', reuse: false, reason: 'spa_shell' });
  });
  it('empty HTML → playwright, no reuse', () => {
    expect(classifyProbe({ response: { status: 200, headers: H, body: '<html><body>hi</body></html>' } })).toMatchObject({ fetcher: 'playwright', reuse: false, reason: 'empty_html' });
  });
  it('non-HTML → simple_http with reuse, even tiny', () => {
    for (const [ct, body] of [['application/pdf', '%PDF-1.4'], ['image/png', new Uint8Array([0x89, 0x50])], ['application/json', '{}'], ['video/mp4', new Uint8Array(10)]] as const) {
      expect(classifyProbe({ response: { status: 200, headers: { 'content-type': ct }, body } })).toMatchObject({ fetcher: 'simple_http', reuse: true, reason: 'non_html_content' });
    }
  });
  it('probe failure → simple_http, no reuse', () => {
    expect(classifyProbe({ error: { errorType: 'timeout', message: 'probe timed out after 3000 ms' } })).toEqual({ fetcher: 'simple_http', reuse: false, reason: 'probe_failed', validation: null });
  });
  it('a client error is the page\'s answer: plain HTTP, reused so the page costs one request', () => {
    for (const status of [400, 401, 404, 410, 451]) {
      expect(classifyProbe({ response: { status, headers: H, body: '' } })).toMatchObject({ fetcher: 'simple_http', reuse: true, reason: `http_${status}` });
    }
  });
  it('a server error or a "try again" 4xx stays with plain HTTP without reuse: the fetch is its retry', () => {
    for (const status of [408, 425, 500, 502, 504]) {
      expect(classifyProbe({ response: { status, headers: H, body: article } })).toMatchObject({ fetcher: 'simple_http', reuse: false, reason: `http_${status}` });
    }
  });
  it('a 200 of 500 bytes or fewer with text is not reused', () => {
    const body = `<p>${'x'.repeat(220)}</p>`;
    expect(classifyProbe({ response: { status: 200, headers: H, body } })).toMatchObject({ fetcher: 'simple_http', reuse: false, reason: 'small_body' });
  });
  it('counts body bytes, not characters', () => {
    const body = `<p>${'é'.repeat(260)}</p>`;
    expect(classifyProbe({ response: { status: 200, headers: H, body } }).reuse).toBe(true);
  });
});
