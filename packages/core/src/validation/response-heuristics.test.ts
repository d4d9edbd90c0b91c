import { describe, expect, it } from 'vitest';
import { extractResponseHeuristics } from './response-heuristics.js';

const asMap = (r: Parameters<typeof extractResponseHeuristics>[0]) => Object.fromEntries(extractResponseHeuristics(r).map((h) => [h.type, h.value]));
const words = (n: number) => 'lorem ipsum '.repeat(n);

describe('extractResponseHeuristics', () => {
  it('records status, server families and content family', () => {
    const m = asMap({ status: 200, headers: { server: 'cloudflare', 'content-type': 'text/html' }, body: `<p>${words(40)}</p>` });
    expect(m).toMatchObject({ status_200: 'true', server_cloudflare: 'true', content_family: 'html' });
    expect(m.has_captcha).toBeUndefined();
    expect(m.empty_body).toBeUndefined();
    expect(asMap({ status: 200, headers: { server: 'nginx/1.25.3' }, body: '' }).server_nginx).toBe('true');
    expect(asMap({ status: 200, headers: { server: 'openresty' }, body: '' }).server_nginx).toBeUndefined();
    expect(asMap({ status: 200, headers: { 'cf-ray': 'abc-AMS' }, body: '' }).server_cloudflare).toBe('true');
  });

  it('records captcha, vendor, SPA, empty body and script ratio', () => {
    const cf = asMap({ status: 403, headers: { 'content-type': 'text/html', 'cf-mitigated': 'challenge' }, body: '<title>Just a moment...</title>' });
    expect(cf).toMatchObject({ status_403: 'true', has_captcha: 'true', block_vendor: 'cloudflare', empty_body: 'true' });
    const spa = asMap({ status: 200, headers: { 'content-type': 'text/html' }, body: `<div id="root"></div><script>${'x'.repeat(2000)}</script>` });
    expect(spa).toMatchObject({ has_spa: 'true', spa_framework: 'react', empty_body: 'true', high_script_ratio: 'true' });
  });

  it('does not call a plain 403 a captcha', () => {
    const m = asMap({ status: 403, headers: { 'content-type': 'text/html' }, body: `<p>${words(40)}</p>` });
    expect(m.has_captcha).toBeUndefined();
    expect(m.status_403).toBe('true');
  });

  it('never marks non-HTML as empty', () => {
    const m = asMap({ status: 200, headers: { 'content-type': 'application/pdf' }, body: '%PDF-1.4' });
    expect(m.empty_body).toBeUndefined();
    expect(m.content_family).toBe('pdf');
  });

  it('records has_paywall and reuses a given validation', () => {
    const r = { status: 200, headers: { 'content-type': 'text/html' }, body: `<p>${words(40)}</p>` };
    const forced = extractResponseHeuristics(r, { isBlocked: false, blockType: null, blockVendor: null, hasSpa: false, framework: null, isEmpty: false, isHtml: true, visibleTextLength: 500, contentFamily: 'html', scriptRatio: 0, hasPaywall: true });
    expect(forced).toContainEqual({ type: 'has_paywall', value: 'true' });
  });
});
