import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { createPlaywrightFetcher, type PlaywrightFetcher } from './playwright-fetcher.js';
import { FetchError } from '../errors.js';
import { decodeText, sniffCharset } from '../http/decode.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
/** Documents Chromium shows in a viewer of its own, as a site serves them. */
const NOT_HTML: Record<string, { type: string; body: Uint8Array }> = {
  '/data.json': { type: 'application/json', body: Buffer.from('{"a":1,"b":[1,2,3]}') },
  '/notes.txt': { type: 'text/plain; charset=utf-8', body: Buffer.from('plain text, caf\u00e9\n') },
  '/feed.xml': { type: 'application/xml', body: Buffer.from('<?xml version="1.0"?><rss><channel><link>https://example.com/</link></channel></rss>') },
  '/pixel': { type: 'image/png', body: PNG },
  // Named as images are: heavy resources are blocked by URL, but not the page the crawler asked for.
  '/pixel.png': { type: 'image/png', body: PNG },
};

// Unquoted and unclosed, as a generated page writes them: Chromium serialises each as `<a href="/p/1"></a>`, so the
// rendered page is 40 % larger than the page as served.
const BARE_LINKS = 40_000;
const bareLinks = staticArticle({ title: 'Every product' }).replace('</body>', `${Array.from({ length: BARE_LINKS }, (_, i) => `<a href=/p/${i}>`).join('')}</body>`);

/** Pages of the open web that fight the browser rather than the crawler: each must end in bounded time, and the next page must still load. */
describe('hostile pages in the browser', () => {
  let server: TestServer;
  let fetcher: PlaywrightFetcher;

  beforeAll(async () => {
    server = await startTestServer({
      '/': { body: staticArticle({ title: 'An ordinary page' }) },
      ...Object.fromEntries(Object.entries(NOT_HTML).map(([path, { type, body }]) => [path, { headers: { 'content-type': type }, body }])),
      '/report.pdf': { headers: { 'content-type': 'application/pdf' }, body: Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n') },
      // An app that asks for its data after a timer, when the network has already been quiet for a while.
      '/late-app': {
        body: '<!DOCTYPE html><html><head><title>App</title></head><body><div id="app"></div><script>setTimeout(function () { fetch("/late-data").then(function (r) { return r.json(); }).then(function (d) { document.getElementById("app").innerHTML = "<h1>" + d.title + "</h1>"; }); }, 600);</script></body></html>',
      },
      '/late-data': { headers: { 'content-type': 'application/json' }, body: '{"title":"Rendered late"}' },
      // Pages in legacy charsets, named by the header or by a <meta> only.
      '/windows-1252': {
        headers: { 'content-type': 'text/html; charset=windows-1252' },
        body: Buffer.from('<html><head><title>Menu</title></head><body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e, \x93quoted\x94</p></body></html>', 'latin1'),
      },
      '/meta-latin1': {
        headers: { 'content-type': 'text/html' },
        body: Buffer.from('<html><head><meta charset="iso-8859-1"><title>Menu</title></head><body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e</p></body></html>', 'latin1'),
      },
      // Text Chromium shows in its own viewer, in a legacy charset named by the header.
      '/plain-1251': { headers: { 'content-type': 'text/plain; charset=windows-1251' }, body: Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, 0x2c, 0x20, 0xec, 0xe8, 0xf0]) },
      // A web component whose text and links live in an open shadow root, one light child slotted into it.
      '/component': {
        body: `<!DOCTYPE html><html><head><title>Shop</title></head><body><product-card><span slot="price">12 EUR</span></product-card>
          <script>customElements.define('product-card', class extends HTMLElement { constructor() { super();
            this.attachShadow({ mode: 'open' }).innerHTML = '<h2>Harbour lamp</h2><p>Price: <slot name="price">unknown</slot></p><a href="/lamp/reviews">Reviews</a><inner-note></inner-note>'; } });
          customElements.define('inner-note', class extends HTMLElement { constructor() { super(); this.attachShadow({ mode: 'open' }).innerHTML = '<p>Ships in two days</p>'; } });</script></body></html>`,
      },
      '/bare-links': { body: bareLinks },
      '/no-content': (_req, res) => res.writeHead(204).end(),
      '/login-required': (_req, res) => res.writeHead(401, { 'content-type': 'text/html', 'www-authenticate': 'Basic realm="staff"' }).end('<html><body><p>Log in first.</p></body></html>'),
      '/moved-to-no-content': (_req, res) => res.writeHead(302, { location: '/no-content' }).end(),
      '/to-file': (_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end(),
      '/to-data': (_req, res) => res.writeHead(302, { location: 'data:text/html,<p>hello</p>' }).end(),
      // A router bug of a single-page app: history.pushState in a tight timer loop, forever.
      '/push-storm': {
        body: staticArticle({ title: 'Push storm' }).replace(
          '</body>',
          '<script>var i = 0; setInterval(function () { for (var j = 0; j < 50; j++) history.pushState({}, "", "/p" + i++); }, 1);</script></body>',
        ),
      },
    });
    fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true });
  });

  afterAll(async () => {
    await fetcher.close();
    await server.close();
  });

  it('renders a page that floods the history with pushState within its deadline, and the next page loads', async () => {
    // Playwright launches Chromium without its IPC flooding protection: such a page then flooded the browser process,
    // no other page loaded, and closing it took close to a minute past a 10 s deadline.
    // A page that did not finish by its deadline would be a timeout error here, not the page.
    const storm = await fetcher.fetch({ url: server.url('/push-storm'), timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(storm).toMatchObject({ status: 200, text: expect.stringContaining('Push storm') });
    const next = await fetcher.fetch({ url: server.url('/'), timeoutMs: 10_000 });
    expect(next.text).toContain('An ordinary page');
  }, 120_000);

  it('keeps the page as served when its rendering outgrows the byte cap and the page as served fits and is readable', async () => {
    // The rendered HTML past maxBytes was too_large, a failure for good, for a page plain HTTP stores: 500,000 links
    // served in 7 MB rendered to 11.9 MB, past the 10 MiB cap, after every browser attempt's full wait. Then it was
    // handed to plain HTTP (wrong_tool), which a fleet of browsers only does not run: the link failed there.
    const maxBytes = Math.ceil(Buffer.byteLength(bareLinks) * 1.1);
    const r = await fetcher.fetch({ url: server.url('/bare-links'), maxBytes });
    expect({ status: r.status, contentType: r.contentType, finalUrl: r.finalUrl, bytes: r.body.byteLength, fetcher: r.fetcher }).toEqual({
      status: 200, contentType: 'text/html', finalUrl: server.url('/bare-links'), bytes: Buffer.byteLength(bareLinks), fetcher: 'playwright',
    });
    expect(r.text).toBe(bareLinks);
    // Below the size as served, the page is too large for either tool.
    const small = await fetcher.fetch({ url: server.url('/bare-links'), maxBytes: Math.floor(Buffer.byteLength(bareLinks) / 2) }).catch((e: unknown) => e);
    expect(small).toBeInstanceOf(FetchError);
    expect((small as FetchError).code).toBe('too_large');
  });

  it('stores the text and links of open shadow roots, nested ones and slotted light nodes included', async () => {
    const r = await fetcher.fetch({ url: server.url('/component') });
    expect(r.text).toMatch(/<h2>Harbour lamp<\/h2><p>Price: <slot name="price"><span slot="price">12 EUR<\/span><\/slot><\/p><a href="\/lamp\/reviews">/);
    expect(r.text).toContain('<p>Ships in two days</p>');
    expect(r.text).toMatch(/^<!DOCTYPE html><html>/);
  });

  it('returns the bytes the site sent for a document Chromium shows in a viewer, not the viewer', async () => {
    // The result was the viewer's HTML under the site's content type: a JSON body wrapped in <pre>, an image's viewer
    // page stored as image/png.
    for (const [path, { type, body }] of Object.entries(NOT_HTML)) {
      const r = await fetcher.fetch({ url: server.url(path) });
      expect({ path, status: r.status, contentType: r.contentType, body: Buffer.from(r.body).toString('base64') }).toEqual({
        path,
        status: 200,
        contentType: type.split(';')[0],
        body: Buffer.from(body).toString('base64'),
      });
      expect(r.text).toBe(type.startsWith('image/') ? null : Buffer.from(body).toString('utf8'));
    }
  }, 60_000);

  it('returns the bytes of a PDF, not the page of its viewer: the viewer keeps them, so the fetcher asks for the file itself', async () => {
    const pdf = await fetcher.fetch({ url: server.url('/report.pdf') });
    expect({ status: pdf.status, contentType: pdf.contentType, text: pdf.text, fetcher: pdf.fetcher, body: Buffer.from(pdf.body).toString() }).toEqual({
      status: 200, contentType: 'application/pdf', text: null, fetcher: 'playwright', body: '%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n',
    });
  });

  it('fails a redirect to file: or data: as the refused scheme it is, as plain HTTP does, not as a browser fault to retry', async () => {
    for (const path of ['/to-file', '/to-data']) {
      const err = await fetcher.fetch({ url: server.url(path) }).catch((e: unknown) => e);
      expect({ path, code: (err as FetchError).code, retryable: (err as FetchError).retryable }).toEqual({ path, code: 'blocked_scheme', retryable: false });
    }
  });

  it('returns a 204 as the answer it is, as plain HTTP does, not as a browser fault to retry', async () => {
    // Chromium stays on about:blank and goto fails with net::ERR_ABORTED: the link was paused and retried as a
    // browser_error until it failed.
    const r = await fetcher.fetch({ url: server.url('/no-content') });
    expect({ status: r.status, size: r.body.length, finalUrl: r.finalUrl }).toEqual({ status: 204, size: 0, finalUrl: server.url('/no-content') });
    const moved = await fetcher.fetch({ url: server.url('/moved-to-no-content') });
    expect({ status: moved.status, redirectChain: moved.redirectChain }).toEqual({ status: 204, redirectChain: [server.url('/moved-to-no-content')] });
  });

  it('returns an app that renders after a timer as rendered, not the empty shell it was before the wait for a wall', async () => {
    // An empty page with a script is given a few seconds to show itself a wall; the page was read before that wait,
    // so an app that rendered during it was returned as its empty shell (empty_content from a browser: a failed link).
    const r = await fetcher.fetch({ url: server.url('/late-app') });
    expect(r.text).toContain('<h1>Rendered late</h1>');
  });

  it('says the rendered page it returns is UTF-8, whatever charset the site served it in', async () => {
    // The rendered page is written out as UTF-8 while its Content-Type still named windows-1252 (or nothing, with a
    // <meta> naming ISO-8859-1): the stored page read back as "CafÃ© crÃ¨me".
    for (const [path, text] of [['/windows-1252', 'Café crème brûlée, “quoted”'], ['/meta-latin1', 'Café crème brûlée']] as const) {
      const r = await fetcher.fetch({ url: server.url(path) });
      expect(r.text).toContain(text);
      expect({ path, contentType: r.headers['content-type'], read: decodeText(r.body, sniffCharset(r.body, r.headers['content-type'])).includes(text) }).toEqual({
        path,
        contentType: 'text/html; charset=utf-8',
        read: true,
      });
    }
  });

  it('labels a text body in a legacy charset as the UTF-8 Chromium hands it over, so it reads back as it was written', async () => {
    // Chromium gives a document's text decoded (in UTF-8) even for the types it shows in its viewer: under its old
    // windows-1251 label the stored text read back as "РџСЂРёРІРµС‚".
    const r = await fetcher.fetch({ url: server.url('/plain-1251') });
    expect({ text: r.text, read: decodeText(r.body, sniffCharset(r.body, r.headers['content-type'])) }).toEqual({ text: 'Привет, мир', read: 'Привет, мир' });
  });

  it('returns a 401 that asks for a password as the answer it is, as plain HTTP does, not as a browser fault to retry', async () => {
    // Headless Chromium has no dialog to cancel: goto failed with net::ERR_INVALID_AUTH_CREDENTIALS, a browser_error.
    const r = await fetcher.fetch({ url: server.url('/login-required') });
    expect({ status: r.status, auth: r.headers['www-authenticate'] }).toEqual({ status: 401, auth: 'Basic realm="staff"' });
  });
});
