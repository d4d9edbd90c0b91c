import { describe, expect, it } from 'vitest';
import { validateResponse, validateResponseDetailed } from './validate-response.js';

const html = (body: string, head = '') => `<!doctype html><html><head><title>t</title>${head}</head><body>${body}</body></html>`;
const text = (n: number) => 'word '.repeat(Math.ceil(n / 5)).slice(0, n);
const H = { 'content-type': 'text/html; charset=utf-8' };

describe('validateResponse', () => {
  it('takes a PDF served as text/html for the PDF it is, not for an empty page', () => {
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
    expect(validateResponse({ status: 200, headers: H, body: new Uint8Array(pdf) })).toMatchObject({ contentFamily: 'pdf', isHtml: false, isEmpty: false, isBlocked: false });
  });

  it('sees an ordinary page as content', () => {
    const v = validateResponse({ status: 200, headers: H, body: html(`<p>${text(600)}</p>`) });
    expect(v).toMatchObject({ isBlocked: false, blockType: null, hasSpa: false, isEmpty: false, isHtml: true, contentFamily: 'html', hasPaywall: false });
    expect(v.visibleTextLength).toBeGreaterThanOrEqual(590);
  });

  it('does not count script, style, template, noscript or svg as visible text', () => {
    const hidden = `<script>${text(500)}</script><style>${text(500)}</style><template>${text(500)}</template><noscript>${text(500)}</noscript><svg><text>${text(500)}</text></svg>`;
    const v = validateResponse({ status: 200, headers: H, body: html(`${hidden}<p>short</p>`) });
    expect(v.visibleTextLength).toBe(5);
    expect(v.isEmpty).toBe(true);
  });

  it("counts the text of an <iframe srcdoc> as the page's own: a browser shows it in place", () => {
    const inner = `<p>${text(600)}</p>`.replace(/"/g, '&quot;');
    const v = validateResponse({ status: 200, headers: H, body: html(`<iframe srcdoc="${inner}"></iframe>`) });
    expect(v).toMatchObject({ isEmpty: false, hasSpa: false });
    expect(v.visibleTextLength).toBeGreaterThanOrEqual(590);
    // An iframe that loads another URL is another page: its fallback text is not this one's.
    expect(validateResponse({ status: 200, headers: H, body: html(`<iframe src="/other">${text(600)}</iframe>`) }).isEmpty).toBe(true);
  });

  it("turns 403, 406 (WAF default deny) and 999 (LinkedIn's bot refusal) into blocked_403 and 429 into rate_limited without a challenge", () => {
    for (const status of [403, 406, 999]) {
      const v = validateResponse({ status, headers: H, body: html(`<p>${text(400)}</p>`) });
      expect(v).toMatchObject({ isBlocked: true, blockType: 'blocked_403' });
    }
    expect(validateResponse({ status: 429, headers: H, body: html(`<p>${text(400)}</p>`) })).toMatchObject({ isBlocked: true, blockType: 'rate_limited' });
  });

  it("takes a wall's refusal served with 429 (Cloudflare's 1015) for the rate limit it is, and a 429 challenge for a challenge", () => {
    // Cloudflare's rate-limit rule: its error page, 429, "You are being rate limited". Pace, not another tool, gets past it.
    const rateLimited = html(
      '<div id="cf-wrapper"><div id="cf-error-details"><h1><span>Error</span> <span>1015</span></h1><span>Ray ID: 8a1b2c3d4e5f6a7b</span><h2>You are being rate limited</h2><h2>What happened?</h2><p>The owner of this website (shop.example.com) has banned you temporarily from accessing this website.</p></div></div>',
    ).replace('<title>t</title>', '<title>Access denied | shop.example.com used Cloudflare to restrict access</title>');
    const limited = validateResponseDetailed({ status: 429, headers: { ...H, server: 'cloudflare' }, body: rateLimited });
    expect(limited.challenge).toMatchObject({ isChallenge: true, vendor: 'cloudflare', kind: 'refusal' });
    expect(limited.result).toMatchObject({ isBlocked: true, blockType: 'rate_limited', blockVendor: 'cloudflare' });
    // The same page with 403 is a firewall block, and Kasada's 429 is a challenge a browser clears.
    expect(validateResponse({ status: 403, headers: { ...H, server: 'cloudflare' }, body: rateLimited })).toMatchObject({ blockType: 'blocked_captcha', blockVendor: 'cloudflare' });
    const kasada = '<html><head></head><body><script>window.KPSDK={};KPSDK.now=Date.now;KPSDK.start=KPSDK.now();</script><script src="/149e9513-01fa-4fb0-aad4-566afd725d1b/2d206a39-8ed7-437e-a3be-862e0f06eea3/ips.js?x=1"></script></body></html>';
    expect(validateResponse({ status: 429, headers: H, body: kasada })).toMatchObject({ blockType: 'blocked_captcha', blockVendor: 'kasada' });
  });

  it('calls a challenge page blocked_captcha with its vendor, whatever the status', () => {
    const body = html('<div id="challenge-stage"></div><script>window._cf_chl_opt={cType:"managed"}</script>', '');
    const v = validateResponse({ status: 403, headers: { ...H, server: 'cloudflare' }, body });
    expect(v).toMatchObject({ isBlocked: true, blockType: 'blocked_captcha', blockVendor: 'cloudflare', hasSpa: false });
  });

  it('calls a 503 that is all script a wall even when no signature knows it, and an outage page an outage', () => {
    // Obfuscated so that no signature matches: a wall family we have not met.
    const wall = html('<p>Hold on.</p><script>setTimeout(function () { var w = window; w.document["coo" + "kie"] = "t=1; path=/"; w["loc" + "ation"]["rel" + "oad"](); }, 300);</script>');
    expect(validateResponseDetailed({ status: 503, headers: H, body: wall }).challenge.isChallenge).toBe(false);
    expect(validateResponse({ status: 503, headers: H, body: wall })).toMatchObject({ isBlocked: true, blockType: 'blocked_captcha', blockVendor: null });
    // The same page with another status is not this rule's: a 200 shell is the SPA detector's, a 500 an origin error.
    for (const status of [200, 500]) expect(validateResponse({ status, headers: H, body: wall }).blockType).toBeNull();
    // An outage page says something, even with a reload script; a bare 503 has no script to run.
    const outage = html(`<h1>Down for maintenance</h1><p>${text(300)}</p><script>setTimeout(function () { location.reload(); }, 60000);</script>`);
    expect(validateResponse({ status: 503, headers: H, body: outage }).isBlocked).toBe(false);
    expect(validateResponse({ status: 503, headers: H, body: html('<p>Service unavailable</p>') }).isBlocked).toBe(false);
  });

  it('trusts a decisive header on any page size', () => {
    const v = validateResponse({ status: 403, headers: { ...H, 'cf-mitigated': 'challenge' }, body: html(`<p>${text(4000)}</p>`) });
    expect(v.blockType).toBe('blocked_captcha');
    const waf = validateResponse({ status: 202, headers: { 'x-amzn-waf-action': 'challenge' }, body: '' });
    expect(waf).toMatchObject({ isBlocked: true, blockVendor: 'aws_waf' });
  });

  it('never calls an origin error or a 404 a challenge, even on a CDN error page', () => {
    const body = html('<div id="cf-error-details"><h1>Error 1020</h1><p>Sorry, you have been blocked. Ray ID: 0123456789abcdef</p></div>');
    for (const status of [404, 500, 502, 522]) {
      expect(validateResponse({ status, headers: { ...H, server: 'cloudflare' }, body }).isBlocked).toBe(false);
    }
    expect(validateResponse({ status: 403, headers: { ...H, server: 'cloudflare' }, body }).blockType).toBe('blocked_captcha');
  });

  it('ignores challenge markup quoted in code blocks', () => {
    const body = html(`<pre><code>window._cf_chl_opt = {}; &lt;div id="px-captcha"&gt;</code></pre><p>${text(300)}</p>`);
    expect(validateResponse({ status: 200, headers: H, body }).isBlocked).toBe(false);
  });

  it('does not flag a long article that quotes challenge text', () => {
    const body = html(`<h1>Why you see Just a moment...</h1><p>Checking your browser before accessing. Verifying you are human. ${text(3000)}</p>`, '<script src="https://www.google.com/recaptcha/api.js"></script>');
    expect(validateResponse({ status: 200, headers: H, body }).isBlocked).toBe(false);
  });

  it('flags an SPA shell only under 200 visible characters', () => {
    const shell = html('<div id="root"></div><script src="/static/js/main.js"></script>');
    expect(validateResponse({ status: 200, headers: H, body: shell })).toMatchObject({ hasSpa: true, framework: 'react', isEmpty: true });
    const ssr = html(`<div id="__next"><p>${text(400)}</p></div><script id="__NEXT_DATA__" type="application/json">{}</script>`);
    expect(validateResponse({ status: 200, headers: H, body: ssr })).toMatchObject({ hasSpa: false, framework: null, isEmpty: false });
  });

  it('tells an empty page from a shell: no scripts, no shell', () => {
    const v = validateResponse({ status: 200, headers: H, body: html('<div id="app"></div>') });
    expect(v).toMatchObject({ hasSpa: false, isEmpty: true });
  });

  it('never calls non-HTML content empty', () => {
    const pdf = validateResponse({ status: 200, headers: { 'content-type': 'application/pdf' }, body: new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d]) });
    expect(pdf).toMatchObject({ isHtml: false, isEmpty: false, hasSpa: false, contentFamily: 'pdf', visibleTextLength: 0 });
    const json = validateResponse({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json).toMatchObject({ isEmpty: false, contentFamily: 'json' });
    const sniffed = validateResponse({ status: 200, headers: {}, body: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]) });
    expect(sniffed.contentFamily).toBe('image');
  });

  it('measures the script share of the HTML', () => {
    const v = validateResponse({ status: 200, headers: H, body: html(`<p>${text(300)}</p><script>${'x'.repeat(5000)}</script>`) });
    expect(v.scriptRatio).toBeGreaterThan(0.8);
    expect(validateResponse({ status: 200, headers: H, body: html(`<p>${text(300)}</p>`) }).scriptRatio).toBe(0);
  });

  it('spots subscription walls', () => {
    const v = validateResponse({ status: 200, headers: H, body: html(`<p>${text(300)}</p><div class="article-paywall">Subscribe to continue reading</div>`) });
    expect(v.hasPaywall).toBe(true);
    const ld = html(`<p>${text(300)}</p>`, '<script type="application/ld+json">{"isAccessibleForFree": "False"}</script>');
    expect(validateResponse({ status: 200, headers: H, body: ld }).hasPaywall).toBe(true);
    expect(validateResponse({ status: 200, headers: H, body: html(`<p>${text(300)} subscribe to our newsletter</p>`) }).hasPaywall).toBe(false);
  });

  it('decodes bytes with the declared charset', () => {
    const cp1251 = new Uint8Array([...Buffer.from('<html><body><p>', 'latin1'), 0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, ...Buffer.from('</p></body></html>', 'latin1')]);
    const { page } = validateResponseDetailed({ status: 200, headers: { 'content-type': 'text/html; charset=windows-1251' }, body: cp1251 });
    expect(page?.visibleText).toBe('Привет');
  });

  it('is total: odd input gives a result, not an exception', () => {
    for (const body of ['', '<<<>>>', '<html', '\u0000\u0001binary', new Uint8Array(0)]) {
      expect(() => validateResponse({ status: 200, headers: { 'content-type': 'text/html' }, body })).not.toThrow();
    }
    expect(validateResponse({ status: 0, headers: {}, body: '' }).isBlocked).toBe(false);
  });

  it('reads mixed-case header names', () => {
    const v = validateResponse({ status: 403, headers: { 'CF-Mitigated': 'challenge', 'Content-Type': 'text/html' }, body: '' });
    expect(v.blockType).toBe('blocked_captcha');
  });

  it('survives deeply nested and unclosed markup', () => {
    const deep = `<html><body>${'<div id="x">'.repeat(20000)}deep${'</div>'.repeat(20000)}</body></html>`;
    expect(validateResponse({ status: 200, headers: H, body: deep }).visibleTextLength).toBe(4);
    const unclosed = `<html><body>${'<code>a <script>b <pre>c '.repeat(5000)}</body></html>`;
    expect(() => validateResponse({ status: 200, headers: H, body: unclosed })).not.toThrow();
  });

  it('finds a mount point nested in a server-rendered wrapper', () => {
    const body = html('<div class="layout"><header>Shop</header><div id="root"><span>Loading…</span></div></div><script src="/main.js"></script>');
    expect(validateResponse({ status: 200, headers: H, body })).toMatchObject({ hasSpa: true, framework: 'react' });
  });

  it('does not take a loading page titled "Just a moment..." on Cloudflare for a challenge', () => {
    const body = '<html><head><title>Just a moment...</title></head><body><div id="app"></div><script src="/app.js"></script></body></html>';
    const v = validateResponse({ status: 200, headers: { ...H, server: 'cloudflare' }, body });
    expect(v).toMatchObject({ isBlocked: false, hasSpa: true });
  });

  it('does not take a contact form with a captcha widget for a captcha gate', () => {
    const body = html(`<h1>Contact</h1><p>${text(250)}</p><form><div class="g-recaptcha" data-sitekey="k"></div></form>`, '<script src="https://www.google.com/recaptcha/api.js"></script>');
    expect(validateResponse({ status: 200, headers: H, body }).isBlocked).toBe(false);
    const gate = html('<h1>Are you a robot?</h1><form><div class="g-recaptcha" data-sitekey="k"></div></form>', '<script src="https://www.google.com/recaptcha/api.js"></script>');
    expect(validateResponse({ status: 200, headers: H, body: gate })).toMatchObject({ isBlocked: true, blockVendor: 'recaptcha' });
  });

  it('keeps words of adjacent blocks apart in the visible text', () => {
    const { page } = validateResponseDetailed({ status: 200, headers: H, body: html('<p>one</p><p>two</p><b>th</b>ree') });
    expect(page?.visibleText).toBe('one two three');
  });

  it('calls a response with no body empty whatever its type, but never a non-HTML body with content', () => {
    expect(validateResponse({ status: 204, headers: {}, body: new Uint8Array(0) })).toMatchObject({ isEmpty: true, isHtml: false });
    expect(validateResponse({ status: 200, headers: { 'content-type': 'application/json' }, body: ' \n' }).isEmpty).toBe(true);
    expect(validateResponse({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }).isEmpty).toBe(false);
  });

  it('counts CJK characters double against the emptiness threshold, without changing visibleTextLength', () => {
    const zh = '社区通知冬季供暖安排将于十一月十五日正式开始'.repeat(5); // 110 characters
    const v = validateResponse({ status: 200, headers: H, body: html(`<p>${zh}</p>`) });
    expect(v).toMatchObject({ isEmpty: false, visibleTextLength: 110 });
    expect(validateResponse({ status: 200, headers: H, body: html(`<p>${'a'.repeat(110)}</p>`) }).isEmpty).toBe(true);
  });

  it('finds shells by Meteor config, Angular CLI bundles, compound mount ids and a custom-element root', () => {
    const shells: [string, string][] = [
      ['<script>__meteor_runtime_config__ = JSON.parse("{}")</script><script src="/abc.js?meteor_js_resource=true"></script>', 'meteor'],
      ['<x-root>Loading…</x-root><script src="polyfills-AB12CD34.js" type="module"></script><script src="main-EF56GH78.js" type="module"></script>', 'angular'],
      ['<div id="reactRoot"></div><script src="/app.js"></script>', 'generic'],
      ['<div id="app-shell"></div><script src="/bundle.js"></script>', 'generic'],
      ['<photo-app></photo-app><script type="module" src="/photo-app.js"></script>', 'generic'],
      ['<div id="outlet"></div><script type="module" src="/VAADIN/build/index.js"></script>', 'generic'],
      ['<script>var Ext = Ext || {}; Ext.manifest = "desktop";</script><script id="microloader" src="bootstrap.js"></script>', 'extjs'],
      ['<script src="/bin/app.js"></script>', 'generic'],
    ];
    for (const [body, framework] of shells) expect(validateResponse({ status: 200, headers: H, body: `<html><body>${body}</body></html>` })).toMatchObject({ hasSpa: true, framework });
    // The same structure with real text is a page, not a shell.
    const ssr = `<html><body><photo-app><p>${text(300)}</p></photo-app><script type="module" src="/photo-app.js"></script></body></html>`;
    expect(validateResponse({ status: 200, headers: H, body: ssr }).hasSpa).toBe(false);
  });
});

