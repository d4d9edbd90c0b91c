/**
 * The encodings site read by the browser fetchers, beside plain HTTP: the rendered page's text in its own characters
 * (an undeclared UTF-8 page too, behind a wall's interstitial as well), the document's encoding handed on, and the
 * links a page in a legacy encoding gives with their queries in that encoding, as plain HTTP gives them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractLinks } from '@crawler/core';
import { createDefaultRegistry, type FetcherRegistry } from '@crawler/fetchers';
import { startTestServer, type TestServer } from '@crawler/testkit';
import { encodingCases, encodingRoutes } from './encodings.js';
import { clearanceOf, interstitialPage, newClearanceToken } from './interstitial.js';

// The cases whose decoding a browser could get wrong or whose encoding must be handed on, one of each way of declaring.
// The zstd pages too: Chromium decodes them with the reference decoder, plain HTTP with fzstd, and both read one page.
const NAMES = ['undeclared-utf8', 'undeclared-1252', 'meta-charset-1251', 'header-sjis', 'http-equiv-gb18030', 'bom-utf16le', 'links-1251', 'links-sjis', 'zstd', 'zstd-streamed', 'gzip-zstd'];
const cases = encodingCases().filter((c) => NAMES.includes(c.path.slice('/enc/'.length)));
const undeclared = cases.find((c) => c.path === '/enc/undeclared-utf8')!;

let server: TestServer;
let registry: FetcherRegistry;

beforeAll(async () => {
  const token = newClearanceToken();
  server = await startTestServer({
    ...encodingRoutes(cases),
    // The undeclared UTF-8 page behind a cookie-and-reload interstitial: what the browser renders after the wall.
    '/walled/undeclared-utf8': (req, res) => {
      if (clearanceOf(req.headers.cookie) === token) return void res.writeHead(200, undeclared.headers).end(Buffer.from(undeclared.body));
      res.writeHead(503, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(interstitialPage({ token, delayMs: 200, refuseWebdriver: false }));
    },
    // What a page's script sees of the pointer and hover Playwright gives headless Chromium (a desktop's, not "none").
    '/media': { headers: { 'content-type': 'text/html; charset=utf-8' }, body: `<!DOCTYPE html><title>media</title><p id="m"></p><script>document.getElementById('m').textContent = 'pointer:' + matchMedia('(pointer: fine)').matches + ' hover:' + matchMedia('(hover: hover)').matches;</script>` },
  }, { host: '127.0.4.70' });
  registry = createDefaultRegistry({ allowPrivateNetworks: true, chromiumPath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', browser: { maxPages: 2, challengeWaitMs: 5_000 } });
});

afterAll(async () => {
  await registry?.closeAll();
  await server?.close();
});

const fetchWith = (name: string, path: string) => registry.get(name).fetch({ url: server.url(path), timeoutMs: 20_000 });
const pathOf = (u: string) => new URL(u).pathname + new URL(u).search;

/** The command lines of the Chromium processes this test process launched. */
function childChromiumArgs(): string[][] {
  const found: string[][] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [, comm = '', rest = ''] = readFileSync(`/proc/${entry}/stat`, 'utf8').trim().match(/^\d+ \((.*)\) (.*)$/) ?? [];
      if (Number(rest.split(' ')[1]) === process.pid && /chrom/i.test(comm)) found.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0'));
    } catch {
      // The process went away while we looked.
    }
  }
  return found;
}

describe('the encodings site in a browser', () => {
  it("reads each page in its own characters, hands on the document's encoding, and encodes link queries in it as plain HTTP does", async () => {
    const got: Record<string, unknown> = {};
    const want: Record<string, unknown> = {};
    for (const c of cases) {
      const plain = await fetchWith('simple_http', c.path);
      const browser = await fetchWith('playwright', c.path);
      const text = browser.text ?? '';
      const links = extractLinks(text, browser.finalUrl, browser.documentCharset === undefined ? {} : { charset: browser.documentCharset }).links.map((l) => pathOf(l.url));
      got[c.path] = { title: text.includes(c.expect.title!), text: text.includes(c.expect.text!), replacement: text.includes('\ufffd'), charset: browser.documentCharset, links };
      want[c.path] = { title: true, text: true, replacement: false, charset: plain.charset, links: c.expect.links };
    }
    expect(got).toEqual(want);
  }, 120_000);

  it('reads an undeclared UTF-8 page right after a wall\'s interstitial reloads into it', async () => {
    const r = await fetchWith('playwright', '/walled/undeclared-utf8');
    expect(r.challenge).toMatchObject({ cleared: true });
    expect(r.status).toBe(200);
    expect(r.text).toContain(undeclared.expect.title);
    expect(r.documentCharset).toBe('utf-8');
  }, 60_000);

  it("keeps the pointer and hover Playwright gives headless Chromium: one --blink-settings, Playwright's and ours", async () => {
    const r = await fetchWith('playwright', '/media');
    expect(r.text).toContain('pointer:true hover:true');
    const launched = childChromiumArgs();
    expect(launched.length).toBeGreaterThan(0);
    for (const args of launched) expect(args.filter((a) => a.startsWith('--blink-settings='))).toHaveLength(1);
  }, 60_000);
});
