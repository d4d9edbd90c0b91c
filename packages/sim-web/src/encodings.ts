/**
 * A site of the text encodings and content codings the real web sends: pages whose charset is declared only in a
 * `<meta>`, only in the header, in both with a disagreement, by a byte-order mark, or nowhere; pages in the legacy
 * encodings of large parts of the web (Shift_JIS, EUC-KR, GB18030, windows-1251, ISO-8859-2); links whose query
 * holds non-ASCII in a page that is not UTF-8; every Content-Encoding a server sends, broken ones included; and
 * bodies that are not HTML. Each case says what a crawler should get out of it, so a test or an audit can crawl the
 * site and compare.
 */
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import iconv from 'iconv-lite';
import { pdfBytes, rawZstdFrame, startTestServer, staticArticle, type Routes, type TestServer } from '@crawler/testkit';
import { ZSTD_PAGES } from './zstd-pages.js';

/** What a crawler should get from one case's page. */
export interface EncodingCase {
  /** Path of the case's page on the site, `/enc/…`. */
  path: string;
  /** What the case exercises, in a few words. */
  about: string;
  /** Response headers, `content-type` included. */
  headers: Record<string, string>;
  /** The body as sent, after every content coding. */
  body: Uint8Array;
  /**
   * What a correct crawler makes of it: `title` and a `text` fragment of the readable text (null for a body without
   * either, such as a PDF), and the paths (with query) of the links it extracts. `fails` when the only right outcome
   * is a failed fetch with an error that says why (a coding nobody can decode).
   */
  expect: { title: string | null; text: string | null; links: string[]; fails?: 'decode_error' };
}

/** The page each case links to (ASCII, UTF-8): a link the crawler must find whatever the case's encoding. */
export const ENCODING_TARGET_PREFIX = '/enc/next/';

function article(title: string, text: string, opts: { head?: string; links?: string[]; charsetMeta?: string } = {}): string {
  const meta = opts.charsetMeta ?? '';
  const links = (opts.links ?? []).map((href, i) => `<li><a href="${href}">link ${i + 1}</a></li>`).join('');
  // Long enough that readability takes the article as the page's main content.
  const paragraphs = Array.from({ length: 4 }, () => `<p>${text} ${text} ${text}</p>`).join('\n');
  return `<!DOCTYPE html>\n<html><head>${meta}${opts.head ?? ''}<title>${title}</title></head>\n<body><article><h1>${title}</h1>\n${paragraphs}\n<ul>${links}</ul></article></body></html>\n`;
}

function utf16(text: string, endian: 'le' | 'be'): Uint8Array {
  const le = Buffer.from(`\ufeff${text}`, 'utf16le');
  if (endian === 'le') return le;
  return le.swap16();
}

const T = ENCODING_TARGET_PREFIX;

/** Every case, by the name used in its path. */
export function encodingCases(): EncodingCase[] {
  const cases: EncodingCase[] = [];
  const add = (name: string, about: string, headers: Record<string, string>, body: Uint8Array | string, expect: Omit<EncodingCase['expect'], 'links'> & { links?: string[] }) =>
    cases.push({ path: `/enc/${name}`, about, headers, body: typeof body === 'string' ? Buffer.from(body) : body, expect: { links: [`${T}${name}`], ...expect } });

  // Charsets.
  const ru = { title: 'Новости дня', text: 'Съешь же ещё этих мягких французских булок, да выпей чаю' };
  add('meta-charset-1251', '<meta charset> only, windows-1251', { 'content-type': 'text/html' }, iconv.encode(article(ru.title, ru.text, { charsetMeta: '<meta charset="windows-1251">', links: [`${T}meta-charset-1251`] }), 'windows-1251'), ru);
  const pl = { title: 'Zażółć gęślą jaźń', text: 'Pchnąć w tę łódź jeża lub ośm skrzyń fig' };
  add('http-equiv-8859-2', '<meta http-equiv content-type> only, ISO-8859-2', { 'content-type': 'text/html' }, iconv.encode(article(pl.title, pl.text, { charsetMeta: '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-2">', links: [`${T}http-equiv-8859-2`] }), 'iso-8859-2'), pl);
  const ja = { title: '日本語のニュース', text: 'いろはにほへと ちりぬるを わかよたれそ つねならむ' };
  add('header-sjis', 'header charset only, Shift_JIS', { 'content-type': 'text/html; charset=Shift_JIS' }, iconv.encode(article(ja.title, ja.text, { links: [`${T}header-sjis`] }), 'shift_jis'), ja);
  const ko = { title: '오늘의 뉴스', text: '다람쥐 헌 쳇바퀴에 타고파 키스의 고유조건은 입술끼리 만나야' };
  add('meta-euc-kr', '<meta charset> only, EUC-KR', { 'content-type': 'text/html' }, iconv.encode(article(ko.title, ko.text, { charsetMeta: '<meta charset="euc-kr">', links: [`${T}meta-euc-kr`] }), 'euc-kr'), ko);
  const zh = { title: '今日新闻', text: '天地玄黄 宇宙洪荒 日月盈昃 辰宿列张 𠀀' };
  add('http-equiv-gb18030', '<meta http-equiv> only, GB18030 (a character outside the BMP)', { 'content-type': 'text/html' }, iconv.encode(article(zh.title, zh.text, { charsetMeta: '<meta http-equiv="content-type" content="text/html;charset=gb18030">', links: [`${T}http-equiv-gb18030`] }), 'gb18030'), zh);
  add('header-wins', 'header windows-1251, <meta> says utf-8: the header wins', { 'content-type': 'text/html; charset=windows-1251' }, iconv.encode(article(ru.title, ru.text, { charsetMeta: '<meta charset="utf-8">', links: [`${T}header-wins`] }), 'windows-1251'), ru);
  const fr = { title: 'Café “déjà vu” — €5', text: 'L’œuvre naïve coûte €5 – voilà' };
  add('bom-utf8', 'UTF-8 BOM, header says windows-1252: the BOM wins', { 'content-type': 'text/html; charset=windows-1252' }, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(article(fr.title, fr.text, { links: [`${T}bom-utf8`] }))]), fr);
  add('bom-utf16le', 'UTF-16LE BOM, header names no charset', { 'content-type': 'text/html' }, utf16(article(fr.title, fr.text, { links: [`${T}bom-utf16le`] }), 'le'), fr);
  add('bom-utf16be', 'UTF-16BE BOM, header says utf-8: the BOM wins', { 'content-type': 'text/html; charset=utf-8' }, utf16(article(fr.title, fr.text, { links: [`${T}bom-utf16be`] }), 'be'), fr);
  add('undeclared-1252', 'windows-1252 bytes, no charset anywhere', { 'content-type': 'text/html' }, iconv.encode(article(fr.title, fr.text, { links: [`${T}undeclared-1252`] }), 'windows-1252'), fr);
  add('undeclared-utf8', 'UTF-8 bytes, no charset anywhere', { 'content-type': 'text/html' }, article(fr.title, fr.text, { links: [`${T}undeclared-utf8`] }), fr);
  // A query is written in the document's encoding (URL standard, "encoding" of the URL parser); a path is UTF-8.
  add('links-1251', 'windows-1251 page linking with Cyrillic in the path and the query', { 'content-type': 'text/html; charset=windows-1251' },
    iconv.encode(article(ru.title, ru.text, { links: ['/enc/search?q=Москва&lang=ru', '/enc/wiki/Москва', '/enc/search?q=&#26085;&#26412;'] }), 'windows-1251'),
    { ...ru, links: ['/enc/search?q=%CC%EE%F1%EA%E2%E0&lang=ru', '/enc/wiki/%D0%9C%D0%BE%D1%81%D0%BA%D0%B2%D0%B0', '/enc/search?q=%26%2326085%3B%26%2326412%3B'] });
  add('links-sjis', 'Shift_JIS page (<meta> only) linking with Japanese in the query', { 'content-type': 'text/html' },
    iconv.encode(article(ja.title, ja.text, { charsetMeta: '<meta charset="shift_jis">', links: ['/enc/search?q=日本'] }), 'shift_jis'),
    { ...ja, links: ['/enc/search?q=%93%FA%96{'] });
  add('base-href', '<base href> in <head>: relative links resolve against it', { 'content-type': 'text/html; charset=utf-8' },
    article('Base href', 'Relative links on this page resolve against its base', { head: '<base href="/enc/base/dir/">', links: ['page?x=1', '../up', '/enc/next/base-href'] }),
    { title: 'Base href', text: 'Relative links on this page resolve against its base', links: ['/enc/base/dir/page?x=1', '/enc/base/up', '/enc/next/base-href'] });

  // Content codings, each of a UTF-8 page.
  const coded = (name: string, about: string, encoding: string, encode: (b: Buffer) => Uint8Array, expect?: Partial<EncodingCase['expect']>) => {
    const title = `Coded ${name}`;
    const text = `This page was sent with Content-Encoding ${encoding}, café`;
    add(name, about, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': encoding }, encode(Buffer.from(article(title, text, { links: [`${T}${name}`] }))), { title, text, ...expect });
  };
  coded('gzip', 'gzip', 'gzip', (b) => gzipSync(b));
  coded('x-gzip', 'x-gzip, gzip\'s old name', 'x-gzip', (b) => gzipSync(b));
  coded('br', 'brotli', 'br', (b) => brotliCompressSync(b));
  coded('deflate-zlib', 'deflate wrapped in zlib, as the RFC says', 'deflate', (b) => deflateSync(b));
  coded('deflate-raw', 'deflate without its zlib wrapper, as some servers send it', 'deflate', (b) => deflateRawSync(b));
  coded('gzip-br', 'two codings, gzip then br', 'gzip, br', (b) => brotliCompressSync(gzipSync(b)));
  // zstd, which Chrome has offered since 123 and Cloudflare and Meta send it: the reference encoder's frames (see
  // zstd-pages.ts), raw blocks built here, and zstd under gzip.
  coded('zstd', 'zstd, one frame with Huffman-coded literals and FSE-coded sequences', 'zstd', () => Buffer.from(ZSTD_PAGES.zstd, 'base64'));
  coded('zstd-streamed', 'zstd, two frames without a content size under an 8 MiB window, as a server streams it', 'zstd', () => Buffer.from(ZSTD_PAGES['zstd-streamed'], 'base64'));
  coded('zstd-raw', 'zstd, one frame of raw blocks', 'zstd', (b) => rawZstdFrame(b, { blockBytes: 256 }));
  coded('gzip-zstd', 'two codings, gzip then zstd', 'gzip, zstd', (b) => rawZstdFrame(gzipSync(b)));
  // Browsers refuse it too (ERR_CONTENT_DECODING_FAILED): the same answer every time, so one attempt, no retries.
  coded('fake-gzip', 'claims gzip, sends the page as it is', 'gzip', (b) => b, { title: null, text: null, links: [], fails: 'decode_error' });
  coded('fake-zstd', 'claims zstd, sends the page as it is', 'zstd', (b) => b, { title: null, text: null, links: [], fails: 'decode_error' });
  // What was inflated is kept, as browsers show it: the page up to the cut, so not the link at its end.
  coded('truncated-gzip', 'gzip cut short (trailer and the end of the stream missing)', 'gzip', (b) => gzipSync(b).subarray(0, Math.floor(gzipSync(b).length * 0.8)), { text: 'This page was sent with Content-Encoding gzip', links: [] });
  // zstd decodes whole blocks only: the blocks before the cut.
  coded('truncated-zstd', 'zstd cut short inside its last block', 'zstd', (b) => rawZstdFrame(b, { blockBytes: Math.floor(b.length * 0.6) }).subarray(0, -20), { text: 'This page was sent with Content-Encoding zstd', links: [] });

  // Bodies that are not HTML.
  add('plain.txt', 'text/plain, UTF-8 without a charset', { 'content-type': 'text/plain' }, 'Plain text: naïve café, 日本語.\nhttp://example.invalid/not-a-link\n', { title: null, text: 'Plain text: naïve café, 日本語.', links: [] });
  add('plain-1251.txt', 'text/plain in windows-1251, charset in the header', { 'content-type': 'text/plain; charset=windows-1251' }, iconv.encode(`${ru.text}\n`, 'windows-1251'), { title: null, text: ru.text, links: [] });
  add('page.xhtml', 'application/xhtml+xml with an XML declaration in ISO-8859-1', { 'content-type': 'application/xhtml+xml' },
    iconv.encode(`<?xml version="1.0" encoding="ISO-8859-1"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>XHTML café</title></head><body><article><h1>XHTML café</h1>${'<p>An XHTML page served as XML, naïve and déjà vu, in Latin-1.</p>'.repeat(4)}<p><a href="${T}page.xhtml">next</a></p></article></body></html>\n`, 'latin1'),
    { title: 'XHTML café', text: 'An XHTML page served as XML, naïve and déjà vu, in Latin-1.' });
  add('api.json', 'a JSON API answer', { 'content-type': 'application/json' }, JSON.stringify({ name: 'Zoë', city: 'Kraków', next: '/enc/next/api.json' }), { title: null, text: '"Zoë"', links: [] });
  add('doc.pdf', 'a PDF', { 'content-type': 'application/pdf' }, pdfBytes(), { title: null, text: null, links: [] });
  return cases;
}

/** The site's routes: every case, the pages they link to (plain UTF-8), and robots.txt. */
export function encodingRoutes(cases: EncodingCase[] = encodingCases()): Routes {
  const routes: Routes = { '/robots.txt': { headers: { 'content-type': 'text/plain' }, body: 'User-agent: *\nDisallow:\n' } };
  for (const c of cases) routes[c.path] = { headers: c.headers, body: c.body };
  const landing = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) =>
    void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title: `Landed on ${req.url ?? ''}` }));
  routes[`${T}*`] = landing;
  routes['/enc/search*'] = landing;
  routes['/enc/wiki/*'] = landing;
  routes['/enc/base/*'] = landing;
  return routes;
}

/** Start the encodings site on `host` (a loopback address), port 0 unless given. */
export async function startEncodingSite(opts: { host?: string; port?: number; cases?: EncodingCase[] } = {}): Promise<TestServer & { cases: EncodingCase[] }> {
  const cases = opts.cases ?? encodingCases();
  const server = await startTestServer(encodingRoutes(cases), { ...(opts.host ? { host: opts.host } : {}), ...(opts.port ? { port: opts.port } : {}) });
  return Object.assign(server, { cases });
}
