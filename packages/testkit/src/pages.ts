/**
 * Page builders every package's tests share: plain functions returning HTML (or bytes), so a test can
 * serve them from any route and assert on the same known text.
 */

const FILLER = [
  'The harbour town woke slowly, its fishing boats returning one by one with the morning tide while gulls argued over the catch.',
  'Local historians trace the market square back to the fourteenth century, when merchants from the river valley first traded wool here.',
  'Today the square hosts a weekly farmers market, a small bookshop and a bakery whose rye bread draws visitors from the neighbouring villages.',
  'Council records show the old lighthouse was automated in 1987, and the keeper’s cottage now houses a museum of maritime instruments.',
];

export interface ArticleOptions {
  /** @defaultValue 'A quiet morning in the harbour town' */
  title?: string;
  /** Paragraph texts; defaults to four paragraphs of real prose (well over 500 bytes). */
  paragraphs?: string[];
  /** Hrefs to link to, in order (relative or absolute). */
  links?: string[];
  /** Extra markup placed inside `<head>` (for example a `<meta charset>`). */
  head?: string;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function linkList(links: string[]): string {
  if (links.length === 0) return '';
  const items = links.map((href, i) => `<li><a href="${escapeHtml(href)}">Related story ${i + 1}</a></li>`).join('');
  return `<nav><ul>${items}</ul></nav>`;
}

/** A server-rendered article: real text (> 500 bytes), a title, and links. What plain HTTP handles well. */
export function staticArticle(opts: ArticleOptions = {}): string {
  const title = opts.title ?? 'A quiet morning in the harbour town';
  const paragraphs = opts.paragraphs ?? FILLER;
  const body = paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">${opts.head ?? ''}<title>${escapeHtml(title)}</title></head>
<body><header><h1>${escapeHtml(title)}</h1></header>
<main><article>
${body}
</article></main>
${linkList(opts.links ?? [])}
<footer><p>Harbour Gazette, printed on recycled paper.</p></footer>
</body></html>`;
}

export interface JsRenderedOptions {
  title?: string;
  paragraphs?: string[];
  links?: string[];
  /** Delay before the script renders the content, to imitate an API call. @defaultValue 0 */
  renderDelayMs?: number;
}

/**
 * An SPA shell: the HTML holds an empty `<div id="app">`; an inline script renders the article in the browser.
 * Plain HTTP sees almost no text; a browser sees the full article.
 */
export function jsRenderedPage(opts: JsRenderedOptions = {}): string {
  const title = opts.title ?? 'Rendered in the browser';
  const content = {
    title,
    paragraphs: opts.paragraphs ?? FILLER,
    links: opts.links ?? [],
  };
  // JSON inside a <script>: escape "<" so a paragraph cannot close the script element.
  const data = JSON.stringify(content).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Loading…</title></head>
<body><div id="app"></div><noscript>Please enable JavaScript to view this page.</noscript>
<script>
(function () {
  var data = ${data};
  function render() {
    document.title = data.title;
    var app = document.getElementById('app');
    var h = document.createElement('h1'); h.textContent = data.title; app.appendChild(h);
    var article = document.createElement('article');
    data.paragraphs.forEach(function (t) { var p = document.createElement('p'); p.textContent = t; article.appendChild(p); });
    app.appendChild(article);
    var ul = document.createElement('ul');
    data.links.forEach(function (href, i) { var li = document.createElement('li'); var a = document.createElement('a'); a.href = href; a.textContent = 'Related story ' + (i + 1); li.appendChild(a); ul.appendChild(li); });
    app.appendChild(ul);
    app.setAttribute('data-rendered', 'true');
  }
  var delay = ${Math.max(0, opts.renderDelayMs ?? 0)};
  if (delay > 0) setTimeout(render, delay); else render();
})();
</script>
</body></html>`;
}

/** Anti-bot vendors whose challenge pages {@link challengePage} can imitate. */
export type ChallengeVendor = 'cloudflare' | 'datadome' | 'perimeterx' | 'akamai' | 'recaptcha' | 'hcaptcha';

/** Markup of real challenge pages, reduced to the markers detectors look for. */
export function challengePage(vendor: ChallengeVendor = 'cloudflare'): string {
  switch (vendor) {
    case 'cloudflare':
      return `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"><meta name="robots" content="noindex,nofollow">
<script>window._cf_chl_opt={cvId:'3',cZone:'example.com',cType:'managed',cRay:'8f1e2d3c4b5a6978',cUPMDTk:"\\/?__cf_chl_tk=abc"};</script>
</head><body class="no-js"><div class="main-wrapper" role="main"><div class="main-content">
<h1 class="zone-name-title h1">example.com</h1><h2 class="h2" id="challenge-running">Checking if the site connection is secure</h2>
<div id="challenge-stage"></div><div id="challenge-body-text" class="core-msg spacer">example.com needs to review the security of your connection before proceeding.</div>
<noscript><div id="challenge-error-title">Enable JavaScript and cookies to continue</div></noscript>
</div></div>
<script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f1e2d3c4b5a6978" async></script>
<div class="footer" role="contentinfo"><div class="footer-inner"><div class="text-center" id="footer-text">Performance &amp; security by Cloudflare</div></div></div>
</body></html>`;
    case 'datadome':
      return `<html><head><title>example.com</title><style>#cmsg{animation: A 1.5s;}</style></head>
<body style="margin:0"><p id="cmsg">Please enable JS and disable any ad blocker</p>
<script>var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'2211F522B61E269B','t':'fe','s':43337,'e':'abc','host':'geo.captcha-delivery.com'}</script>
<script src="https://ct.captcha-delivery.com/c.js"></script></body></html>`;
    case 'perimeterx':
      return `<!DOCTYPE html><html lang="en"><head><title>Access to this page has been denied</title>
<script>window._pxAppId='PXabc123';window._pxJsClientSrc='/abc123/init.js';</script></head>
<body><div class="px-container"><div class="px-inner"><h1>Before we continue...</h1>
<p>Press &amp; Hold to confirm you are a human (and not a bot).</p><div id="px-captcha"></div>
<p>Reference ID 5b3c1a2e-0000-11ee-a1b2-000000000000</p></div></div>
<script src="https://captcha.px-cdn.net/PXabc123/captcha.js?a=c&m=0"></script></body></html>`;
    case 'akamai':
      return `<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY>
<H1>Access Denied</H1>You don't have permission to access "http&#58;&#47;&#47;www&#46;example&#46;com&#47;" on this server.<P>
Reference&#32;&#35;18&#46;2f1e4a17&#46;1700000000&#46;1a2b3c4d<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;2f1e4a17
</BODY></HTML>`;
    case 'recaptcha':
      return `<!doctype html><html><head><title>Security check</title>
<script src="https://www.google.com/recaptcha/api.js" async defer></script></head>
<body><h1>Please verify you are a human</h1><p>Our systems have detected unusual traffic from your computer network.</p>
<form action="/verify" method="post"><div class="g-recaptcha" data-sitekey="6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI"></div>
<button type="submit">Continue</button></form></body></html>`;
    case 'hcaptcha':
      return `<!doctype html><html><head><title>One more step</title>
<script src="https://hcaptcha.com/1/api.js" async defer></script></head>
<body><h1>One more step</h1><p>Please complete the security check to access this site.</p>
<form method="post"><div class="h-captcha" data-sitekey="10000000-ffff-ffff-ffff-000000000001"></div></form></body></html>`;
  }
}

/**
 * A normal article that MENTIONS anti-bot vendors the way ordinary pages do (a "protected by Cloudflare"
 * footer, a contact form with reCAPTCHA). Detectors must NOT flag it: a challenge is
 * detected by its structure, not by a vendor's name on the page.
 */
export function articleMentioningVendors(): string {
  return staticArticle({
    title: 'How we keep this small blog online',
    paragraphs: [
      ...FILLER,
      'We moved our DNS to Cloudflare last year and the site has been faster since; this post explains the setup we chose.',
    ],
  }).replace(
    '<footer>',
    `<section><h2>Contact</h2><form action="/contact" method="post"><input name="email"><div class="g-recaptcha" data-sitekey="6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI"></div></form>
<script src="https://www.google.com/recaptcha/api.js" async defer></script></section>
<footer><p>Protected by Cloudflare. Performance &amp; security by Cloudflare.</p></footer><footer>`,
  );
}

export interface WebdriverGatedOptions {
  title?: string;
  paragraphs?: string[];
}

/**
 * A Cloudflare-like gate: the HTML IS the challenge page ("Just a moment...", `/cdn-cgi/challenge-platform/`),
 * and an inline script swaps in the real article only when the browser does not look automated:
 * `navigator.webdriver` is not true, the user agent has no `HeadlessChrome`, and the client-hint brands
 * have no `HeadlessChromium`. Plain HTTP and plain automation see the challenge; a stealth browser sees the article.
 * The swap replaces the whole document, so no challenge marker survives in the rendered HTML, and the article
 * travels base64-encoded, so its text appears only after the swap.
 */
export function webdriverGatedPage(opts: WebdriverGatedOptions = {}): string {
  const real = staticArticle({ title: opts.title ?? 'Welcome past the gate', paragraphs: opts.paragraphs });
  const inner = real.slice(real.indexOf('<head>'), real.lastIndexOf('</html>'));
  // Shipped base64-encoded, as real gates ship an encrypted payload: the article's text is not in the HTML
  // that plain HTTP or a detected browser gets to see.
  const payload = Buffer.from(inner, 'utf8').toString('base64');
  const gate = `<script>
(function () {
  var n = navigator;
  var brands = (n.userAgentData && n.userAgentData.brands) || [];
  var automated = n.webdriver === true
    || /HeadlessChrome/.test(n.userAgent)
    || brands.some(function (b) { return /Headless/i.test(b.brand); });
  if (!automated) {
    var bytes = Uint8Array.from(atob('${payload}'), function (c) { return c.charCodeAt(0); });
    document.documentElement.innerHTML = new TextDecoder().decode(bytes);
  }
})();
</script>`;
  return challengePage('cloudflare').replace('</body>', `${gate}</body>`);
}

/** A page with markup but no text: what "empty_content" looks like. */
export function emptyPage(): string {
  return '<!doctype html><html><head><meta charset="utf-8"><title></title></head><body><div id="root"></div></body></html>';
}

/** A small valid one-page PDF saying "Hello PDF". Serve with `content-type: application/pdf`. */
export function pdfBytes(): Uint8Array {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    null, // content stream, built below
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const stream = 'BT /F1 24 Tf 72 72 Td (Hello PDF) Tj ET';
  objects[3] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}
