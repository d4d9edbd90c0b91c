import { describe, expect, it } from 'vitest';
import { CAPTCHA_WIDGETS, CHALLENGE_SCORE_THRESHOLD, CHALLENGE_SIGNATURES, type ChallengeSignature } from './challenge-signatures.js';
import { detectChallenge } from './detect-challenge.js';
import { extractPageFeatures } from './page-features.js';
import { CUSTOM_ELEMENT_ROOT, SPA_SIGNATURES } from './spa-signatures.js';
import { EXTERNAL_SCRIPT } from './detect-spa.js';
import type { TextPattern } from './tag-scan.js';
import { PAYWALL_MARKERS } from './detect-paywall.js';

const page = (html: string) => extractPageFeatures(html);

describe('challenge signatures (data)', () => {
  it('are well-formed: named, weighted, header markers name a header, no stateful regexes', () => {
    const vendors = new Set<string>();
    for (const sig of CHALLENGE_SIGNATURES) {
      expect(vendors.has(sig.vendor)).toBe(false);
      vendors.add(sig.vendor);
      expect(sig.markers.length).toBeGreaterThan(0);
      for (const m of sig.markers) {
        expect(m.weight).toBeGreaterThan(0);
        // A /g or /y regex keeps lastIndex between .test() calls and would skip matches on the next page.
        expect(m.pattern.global || m.pattern.sticky).toBe(false);
        if (m.in === 'header') expect(m.header).toMatch(/^[a-z0-9-]+$/);
        if (m.decisive) expect(m.in).toBe('header');
      }
      for (const k of sig.kinds ?? []) {
        expect(k.pattern.global || k.pattern.sticky).toBe(false);
        if (k.in === 'header') expect(k.header).toMatch(/^[a-z0-9-]+$/);
      }
    }
    for (const re of [...SPA_SIGNATURES.flatMap((s) => s.strong), ...PAYWALL_MARKERS.map((m) => m.pattern)]) expect(re.global || re.sticky).toBe(false);
  });

  it('bound every negated-class run, so adversarial markup (thousands of unclosed "<img src=" or "<iframe ") stays linear', () => {
    // `<img[^>]+src=` over 700 KB of "<img src=" without a ">" backtracked quadratically: over a minute per page.
    // `shieldsquare\.com\/.*captcha` over 400 KB of "shieldsquare.com/" in a comment: 23 s. An unescaped `.` runs
    // to the end of the line as a negated class does.
    const unbounded = /(\[\^[^\]]*\]|(?<!\\)\.)([+*]|\{\d+,\})/;
    const all = [
      ...CHALLENGE_SIGNATURES.flatMap((s) => [...s.markers, ...(s.kinds ?? [])].filter((m) => m.in === 'html').map((m) => m.pattern)),
      ...CAPTCHA_WIDGETS.map(([re]) => re),
      ...SPA_SIGNATURES.flatMap((s) => s.strong),
      ...PAYWALL_MARKERS.map((m) => m.pattern),
    ];
    expect(all.filter((re) => unbounded.test(re.source)).map((re) => re.source)).toEqual([]);
  });

  it("scan a tag's attributes with a tag scan, not a regex, so thousands of unclosed tags stay linear", () => {
    // `<script[^>]{1,500}src=` over 2 MiB of "<script" tried 500 positions after each one: seconds per page, for
    // each such marker. tagAttributes finds the same matches touching each character a bounded number of times.
    const tagRun = /(^|\|)<[a-z-]+\[\^>\]\{/;
    const flat = (p: TextPattern): TextPattern[] => ('parts' in p ? (p.parts as TextPattern[]).flatMap(flat) : [p]);
    const all = [
      ...CHALLENGE_SIGNATURES.flatMap((s) => [...s.markers, ...(s.kinds ?? [])].filter((m) => m.in === 'html').map((m) => m.pattern)),
      ...SPA_SIGNATURES.flatMap((s) => s.strong),
      CUSTOM_ELEMENT_ROOT,
      EXTERNAL_SCRIPT,
    ].flatMap(flat);
    expect(all.filter((p) => p instanceof RegExp && tagRun.test(p.source)).map((p) => p.source)).toEqual([]);
  });

  it('no vendor reaches the threshold from headers that ordinary protected pages carry', () => {
    const everyday = { server: 'cloudflare', 'cf-ray': 'x', 'x-datadome': 'protected', 'x-dd-b': '1', 'x-iinfo': 'x', 'x-cdn': 'Imperva', 'x-sucuri-id': '1', 'x-kpsdk-ct': 'x' };
    const v = detectChallenge(page('<html><body><p>hello</p></body></html>'), everyday, 200);
    expect(v.isChallenge).toBe(false);
    for (const s of v.scores) expect(s.score).toBeLessThan(CHALLENGE_SCORE_THRESHOLD);
  });
});

describe('detectChallenge', () => {
  it("names ShieldSquare's captcha by a captcha URL on its domain, not by the word anywhere after it", () => {
    const gate = (src: string) => page(`<html><head><script src="${src}"></script></head><body><div id="captcha"></div></body></html>`);
    expect(detectChallenge(gate('https://cdn.shieldsquare.com/ssc/captcha/v2/main.js'), {}, 200)).toMatchObject({ isChallenge: true, vendor: 'radware' });
    expect(detectChallenge(gate('https://cdn.shieldsquare.com/ssc/tag.js'), {}, 200).vendor).not.toBe('radware');
  });

  it('needs a small page for body markers', () => {
    const small = page('<html><head><title>Access to this page has been denied</title></head><body><div id="px-captcha"></div></body></html>');
    expect(detectChallenge(small, {}, 403)).toMatchObject({ isChallenge: true, vendor: 'perimeterx' });
    const long = page(`<html><body><div id="px-captcha"></div><p>${'text '.repeat(1000)}</p></body></html>`);
    expect(detectChallenge(long, {}, 200).isChallenge).toBe(false);
  });

  it('counts live challenge data on a page of any length, but not where a challenge never comes or where it is quoted', () => {
    // Anubis lets a site replace its explanation with its own text: the page stays a challenge however long that is.
    const anubis = (body: string) =>
      page(`<html><head><title>Making sure you&#39;re not a bot!</title><script id="anubis_challenge" type="application/json">{"rules":{"difficulty":4},"challenge":"ab12"}</script></head><body><p id="status">Loading...</p><details><summary>Why am I seeing this?</summary><p>${body}</p></details></body></html>`);
    expect(detectChallenge(anubis('Our server is small. '.repeat(100)), {}, 200)).toMatchObject({ isChallenge: true, vendor: 'anubis' });
    expect(detectChallenge(anubis('Our server is small.'), {}, 404).isChallenge).toBe(false);
    const quoted = page(`<html><body><p>${'How we set it up. '.repeat(60)}</p><pre><code>&lt;script id="anubis_challenge" type="application/json"&gt;</code></pre><code><script id="anubis_challenge"></script></code></body></html>`);
    expect(detectChallenge(quoted, {}, 200).isChallenge).toBe(false);
  });

  it('only headers speak for non-HTML bodies', () => {
    expect(detectChallenge(null, { 'x-amzn-waf-action': 'captcha' }, 405)).toMatchObject({ isChallenge: true, vendor: 'aws_waf' });
    expect(detectChallenge(null, { server: 'cloudflare' }, 403)).toMatchObject({ isChallenge: false, vendor: 'cloudflare' });
  });

  it('names the best vendor with evidence even when it is not a challenge', () => {
    expect(detectChallenge(page('<p>x</p>'), { server: 'AkamaiGHost' }, 403)).toMatchObject({ isChallenge: false, vendor: 'akamai' });
    expect(detectChallenge(page('<p>x</p>'), {}, 403)).toMatchObject({ isChallenge: false, vendor: null });
  });

  it('accepts another signature table', () => {
    const custom: ChallengeSignature[] = [{ vendor: 'acme', markers: [{ in: 'title', pattern: /^acme shield$/i, weight: 10 }] }];
    expect(detectChallenge(page('<title>ACME Shield</title>'), {}, 200, custom)).toMatchObject({ isChallenge: true, vendor: 'acme' });
  });

  it('counts a blank-page-only marker only on a blank page', () => {
    const blank = page('<html><head><script src="/_Incapsula_Resource?SWJIYLWA=abc"></script></head><body></body></html>');
    expect(detectChallenge(blank, {}, 200)).toMatchObject({ isChallenge: true, vendor: 'imperva' });
    const content = page(`<html><head><script src="/_Incapsula_Resource?SWJIYLWA=abc"></script></head><body><p>${'news '.repeat(40)}</p></body></html>`);
    expect(detectChallenge(content, { 'x-iinfo': '1', 'x-cdn': 'Imperva' }, 200).isChallenge).toBe(false);
  });

  it('recognises the older Cloudflare managed and IUAM forms', () => {
    const managed = page('<html><head><title>Please Wait... | Cloudflare</title></head><body><form id="challenge-form" action="/?__cf_chl_managed_tk__=pmd_x"></form></body></html>');
    expect(detectChallenge(managed, {}, 403)).toMatchObject({ isChallenge: true, vendor: 'cloudflare' });
    const iuam = page('<html><body><form id="challenge-form" action="/cdn-cgi/l/chk_jschl"><input name="jschl_vc"></form></body></html>');
    expect(detectChallenge(iuam, {}, 503)).toMatchObject({ isChallenge: true, vendor: 'cloudflare' });
  });

  it('treats a captcha widget inside a form that asks for data as a form, not a gate', () => {
    const gate = '<html><head><title>Security check</title><script src="https://www.google.com/recaptcha/api.js"></script></head><body><p>Please verify you are human.</p><form method="post"><div class="g-recaptcha" data-sitekey="k"></div><input type="hidden" name="next" value="/"></form></body></html>';
    expect(detectChallenge(page(gate), {}, 200)).toMatchObject({ isChallenge: true, vendor: 'recaptcha' });
    const contact = gate.replace('<input type="hidden"', '<input type="email" name="email"><textarea name="message"></textarea><input type="hidden"');
    expect(detectChallenge(page(contact), {}, 200).isChallenge).toBe(false);
    // A text field for the captcha's own answer does not make a gate a form.
    const textCaptcha = gate.replace('<input type="hidden"', '<input type="text" name="captcha_answer"><input type="hidden"');
    expect(detectChallenge(page(textCaptcha), {}, 200).isChallenge).toBe(true);
  });

  it('recognises further vendors by their endpoints and templates', () => {
    const cases: [string, Record<string, string>, number, string][] = [
      ['<title>Request Rejected</title><body>The requested URL was rejected. Please consult with your administrator.<br>Your support ID is: 1234567890</body>', {}, 200, 'f5'],
      ['<head><meta http-equiv="refresh" content="0;/.well-known/sgcaptcha/?r=%2F"></head>', {}, 202, 'siteground'],
      ["<script>var arg1='ABC';function reload(x){setCookie('acw_sc__v2',x);}</script>", {}, 200, 'aliyun'],
      ['<div id="nocaptcha"></div><script src="/_____tmd_____/punish-pc.js"></script>', {}, 200, 'aliyun'],
      ['<form id="checkbox-captcha-form" action="/checkcaptcha?key=x"><input type="submit"></form>', {}, 200, 'yandex'],
      ['<script src="/__qrator/qauth.js"></script><p>…</p>', { server: 'QRATOR' }, 401, 'qrator'],
      ['<title>Captcha - BitNinja</title><form action="/.bitninja/captcha"></form>', {}, 200, 'bitninja'],
      ['<script>window.rbzns={seed:"x"};</script>', {}, 200, 'reblaze'],
    ];
    for (const [html, headers, status, vendor] of cases) expect(detectChallenge(page(html), headers, status)).toMatchObject({ isChallenge: true, vendor });
  });

  it('recognises localised captcha gates, still only with a widget', () => {
    const de = '<title>Sicherheitsüberprüfung</title><p>Bitte bestätigen Sie, dass Sie ein Mensch sind.</p>';
    expect(detectChallenge(page(de), {}, 200).isChallenge).toBe(false);
    expect(detectChallenge(page(`${de}<div class="h-captcha" data-sitekey="k"></div>`), {}, 200)).toMatchObject({ isChallenge: true, vendor: 'hcaptcha' });
    // Languages without a phrase of their own: the negation before "robot" or the word for a human being.
    const widget = '<div class="cf-turnstile" data-sitekey="k"></div><script src="https://challenges.cloudflare.com/turnstile/v0/api.js"></script>';
    for (const words of ['<p>Conferma di non essere un robot.</p>', '<p>Confirme que você não é um robô.</p>', '<p>Potwierdź, że jesteś człowiekiem.</p>']) {
      expect(detectChallenge(page(`<title>x</title>${words}${widget}`), {}, 200)).toMatchObject({ isChallenge: true, vendor: 'turnstile' });
      expect(detectChallenge(page(`<title>x</title>${words}`), {}, 200).isChallenge).toBe(false);
    }
    const zh = '<title>安全验证</title><div id="c"></div><script src="https://static.geetest.com/v4/gt4.js"></script>';
    expect(detectChallenge(page(zh), {}, 200)).toMatchObject({ isChallenge: true, vendor: 'geetest' });
  });

  it('treats a cookie-and-reload script as a check only on a near-blank page, and prefers a named vendor', () => {
    const check = '<title>x</title><p>Please wait while we check your browser.</p><script>document.cookie="a=1";location.reload()</script>';
    expect(detectChallenge(page(check), {}, 503)).toMatchObject({ isChallenge: true, vendor: 'js_cookie_check' });
    const article = `<p>${'Real article text. '.repeat(40)}</p><script>document.cookie="seen=1";location.reload()</script>`;
    expect(detectChallenge(page(article), {}, 200).isChallenge).toBe(false);
    // A short page (an imprint) with an inline consent script is not a check without "checking your browser".
    const imprint = `<h1>Imprint</h1><p>${'Company, street, town, register number. '.repeat(4)}</p><script>function ok(){document.cookie="cc=1";location.reload()}</script>`;
    expect(detectChallenge(page(imprint), {}, 200).isChallenge).toBe(false);
    const named = `${check.replace('<title>x</title>', '<title>Security check</title>')}<div class="cf-turnstile" data-sitekey="k"></div><script src="https://challenges.cloudflare.com/turnstile/v0/api.js"></script>`;
    expect(detectChallenge(page(named), {}, 200).vendor).toBe('turnstile');
  });

  it('counts a script-served captcha image as a widget, but never two widgets without the words', () => {
    const gate = '<title>Captcha</title><form><img src="/captcha.php?t=1"><input type="text" name="captcha_code"></form>';
    expect(detectChallenge(page(gate), {}, 200)).toMatchObject({ isChallenge: true });
    const screenshot = '<title>t</title><p>How it looks:</p><img src="/img/captcha-example.png">';
    expect(detectChallenge(page(screenshot), {}, 200).isChallenge).toBe(false);
    const twoWidgets = '<title>t</title><img src="/captcha.php?x"><div class="g-recaptcha" data-sitekey="k"></div>';
    expect(detectChallenge(page(twoWidgets), {}, 200).isChallenge).toBe(false);
  });

  it('does not take a short post quoting a WAF template for the template', () => {
    const post = `<title>API returns "Request Rejected"</title><p>Since Monday every call returns: The requested URL was rejected. Please consult with your administrator. Your support ID is: 1234567890123. ${'We tried other clients, other networks and other keys, and the error stays the same. '.repeat(6)}</p>`;
    expect(detectChallenge(page(post), {}, 200).isChallenge).toBe(false);
  });
});


describe('cookie-and-reload checks', () => {
  const shell = (script: string, body = '<div id="root"></div>') =>
    page(`<html><head><title>x</title><script>${script}</script><script defer src="/static/js/main.1a2b3c.js"></script></head><body>${body}</body></html>`);

  it('a near-blank page whose one script sets a cookie and reloads is a challenge, whoever wrote it', () => {
    const verdict = detectChallenge(page('<html><body><p>One moment…</p><script>document.cookie="chk=91af; path=/"; setTimeout(function(){ location.reload(); }, 800);</script></body></html>'), {}, 503);
    expect(verdict).toMatchObject({ isChallenge: true, vendor: 'js_cookie_check' });
    const assign = detectChallenge(page('<html><body><script>document.cookie = "v=1"; window.location.href = window.location.href;</script></body></html>'), {}, 200);
    expect(assign.isChallenge).toBe(true);
  });

  it('a cookie in one script and a reload in another, or both on a framework shell, are not', () => {
    const split = page('<html><body><script>document.cookie="rum=1"</script><script>window.onerror=function(){ location.reload() }</script></body></html>');
    expect(detectChallenge(split, {}, 200).isChallenge).toBe(false);
    const consent = shell('function save(all){ document.cookie = "consent=" + all; location.reload(); }');
    expect(detectChallenge(consent, {}, 200).isChallenge).toBe(false);
    // The same shell without a framework mount point is only "some script": the check still counts there.
    expect(detectChallenge(shell('document.cookie = "consent=1"; location.reload();', ''), {}, 200).isChallenge).toBe(true);
  });
});

describe('origin-error statuses', () => {
  const jslFirstStage = `<script>document.cookie=('_')+('_')+('j')+('s')+('l')+('_')+('c')+('l')+('e')+('a')+('r')+('a')+('n')+('c')+('e')+('_')+('s')+('=')+('1')+';max-age=3600;path=/';location.href=location.pathname+location.search</script>`;
  const cookieReload = `<html><body><script>document.cookie='chk=1; path=/'; location.reload();</script></body></html>`;

  it('a vendor that challenges on 521 is recognised there', () => {
    expect(detectChallenge(page(jslFirstStage), {}, 521)).toMatchObject({ isChallenge: true, vendor: 'jiasule' });
  });

  it('any other cookie check on a 521 or 502 is an origin error, not a challenge', () => {
    expect(detectChallenge(page(cookieReload), {}, 521).isChallenge).toBe(false);
    expect(detectChallenge(page(jslFirstStage), {}, 502).isChallenge).toBe(false);
    expect(detectChallenge(page(cookieReload), {}, 200)).toMatchObject({ isChallenge: true, vendor: 'js_cookie_check' });
  });
});

describe('what a challenge waits for (kind)', () => {
  it('names the kind by the first kind marker that matches, else by the signature, else interstitial', () => {
    const table: ChallengeSignature[] = [
      {
        vendor: 'acme',
        markers: [{ in: 'title', pattern: /^acme shield/i, weight: 10 }],
        kind: 'captcha',
        kinds: [
          { in: 'text', pattern: /solving itself/i, kind: 'interstitial' },
          { in: 'text', pattern: /banned/i, kind: 'refusal' },
        ],
      },
      { vendor: 'plain', markers: [{ in: 'title', pattern: /^plain wall$/i, weight: 10 }] },
    ];
    const acme = (text: string) => detectChallenge(page(`<title>ACME Shield</title><p>${text}</p>`), {}, 200, table);
    expect(acme('You are banned.')).toMatchObject({ isChallenge: true, kind: 'refusal' });
    // Order decides between two that match.
    expect(acme('Solving itself; banned clients stay here.').kind).toBe('interstitial');
    expect(acme('Tick the box.').kind).toBe('captcha');
    expect(detectChallenge(page('<title>Plain wall</title>'), {}, 200, table).kind).toBe('interstitial');
  });

  it('has no kind when the page is not a challenge, and kind markers add no weight', () => {
    const table: ChallengeSignature[] = [{ vendor: 'acme', markers: [{ in: 'title', pattern: /^acme$/i, weight: 4 }], kinds: [{ in: 'text', pattern: /banned/i, kind: 'refusal' }] }];
    const v = detectChallenge(page('<title>ACME</title><p>banned</p>'), {}, 403, table);
    expect(v).toMatchObject({ isChallenge: false, vendor: 'acme', kind: null });
    expect(v.scores[0]!.score).toBe(4);
  });

  it('reads the kind from headers alone when the body is not HTML', () => {
    expect(detectChallenge(null, { 'x-amzn-waf-action': 'captcha' }, 405)).toMatchObject({ isChallenge: true, kind: 'captcha' });
    expect(detectChallenge(null, { 'x-amzn-waf-action': 'challenge' }, 202)).toMatchObject({ isChallenge: true, kind: 'interstitial' });
    expect(detectChallenge(null, { 'x-vercel-mitigated': 'deny' }, 403)).toMatchObject({ isChallenge: true, kind: 'refusal' });
    expect(detectChallenge(null, { 'x-sucuri-block': 'BNP005' }, 403)).toMatchObject({ isChallenge: true, kind: 'refusal' });
  });

  it("names DataDome's device check a captcha once its script has put the captcha frame in the page (the rendered DOM keeps the check's config)", () => {
    // The device check's page as served: its config says `rt: 'i'`, and c.js runs the check in the browser.
    const check = `<html><head><title>shop.example</title></head><body style="margin:0"><p id="cmsg">Please enable JS and disable any ad blocker</p><script data-cfasync="false">var dd={'rt':'i','cid':'AHrlqAAAAAMAffc050fec94dbca3','hsh':'A0AAC36098B2CC2B','t':'fe','s':66105,'e':'818319478da6bd0c','host':'geo.captcha-delivery.com'}</script><script data-cfasync="false" src="https://ct.captcha-delivery.com/c.js"></script>`;
    const headers = { 'x-datadome': 'protected' };
    expect(detectChallenge(page(`${check}</body></html>`), headers, 403)).toMatchObject({ vendor: 'datadome', kind: 'interstitial' });
    // The check failed: the script appended the captcha's frame, and the config it started from is still there.
    const frame = '<iframe src="https://geo.captcha-delivery.com/captcha/?initialCid=AHrlqAAAAAMAffc050fec94dbca3&amp;hash=A0AAC36098B2CC2B&amp;cid=x&amp;t=fe&amp;s=66105" title="DataDome CAPTCHA" width="100%" height="100%" frameborder="0"></iframe>';
    expect(detectChallenge(page(`${check}${frame}</body></html>`), headers, 403)).toMatchObject({ vendor: 'datadome', kind: 'captcha' });
  });

  it('tells a captcha gate a person solves from a widget that passes a browser by itself', () => {
    const gate = (widget: string) => detectChallenge(page(`<html><head><title>Security check</title></head><body><p>Please verify you are human.</p>${widget}</body></html>`), {}, 403);
    expect(gate('<div class="h-captcha" data-sitekey="k"></div><script src="https://hcaptcha.com/1/api.js"></script>')).toMatchObject({ vendor: 'hcaptcha', kind: 'captcha' });
    expect(gate('<div class="g-recaptcha" data-sitekey="k"></div><script src="https://www.google.com/recaptcha/api.js"></script>')).toMatchObject({ vendor: 'recaptcha', kind: 'captcha' });
    expect(gate('<div class="cf-turnstile" data-sitekey="k"></div>')).toMatchObject({ vendor: 'turnstile', kind: 'interstitial' });
    // reCAPTCHA v3 scores the browser and its page submits the token: no person involved.
    expect(gate('<script src="https://www.google.com/recaptcha/api.js?render=6LcAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"></script>')).toMatchObject({ vendor: 'recaptcha', kind: 'interstitial' });
    expect(gate('<img src="/captcha.php?t=1">')).toMatchObject({ vendor: 'generic', kind: 'captcha' });
  });
});
