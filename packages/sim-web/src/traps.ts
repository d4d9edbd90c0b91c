/**
 * The `traps` site: a small real site (a home page, 4 sections, 40 articles) with the URL spaces that eat a
 * link-following crawl's budget on the real web beside it, each reached from the home page, and pages of link
 * directives and spellings. Pure: a request's path and query in, an answer out; sim-site.ts adds the socket.
 *
 * Traps (every one answers 200 with HTML for any URL of its space, as the real ones do):
 * - `/cal?month=N`: a calendar whose months link to N-1 and N+1 without end;
 * - `/deep/`: a page linking `a/` relative to itself, served at any depth (`/deep/a/a/a/…`, a soft 404);
 * - `/shop?sid=…`: every link carries a session id drawn afresh for each answer (`sid=` 32 hex digits), over 5 products;
 * - `/big`: one page of 100,000 links (`/big/item/N`, each a page with no links);
 * - `/dups`: the articles 1–3 and `/docs/` spelled every way a site spells one page (parameter order, fragments,
 *   percent-escape case, a trailing `?`, `index.html`, a trailing slash, an upper-case scheme and host, `&amp;`);
 * - `/directives`: one link of every kind a crawler must follow or refuse, robots metas and headers, redirects.
 */

import { staticArticle } from '@crawler/testkit';

/** Articles of the real site: `/article/1` … `/article/40`. */
export const TRAP_ARTICLES = 40;
/** Sections of the real site, each listing ten articles. */
export const TRAP_SECTIONS = 4;
/** Links on the `/big` page. */
export const BIG_PAGE_LINKS = 100_000;
/** Products of the session-id shop. */
export const SHOP_PRODUCTS = 5;

/** An answer of the trap site. */
export interface TrapAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What the trap site needs from its server. */
export interface TrapContext {
  /** The site's own origin, `http://127.0.0.x:port`. */
  origin: string;
  /** The origin of another site of the web (an offsite host), or undefined when the web has no other. */
  offsite: string | undefined;
  /** A fresh session id (32 hex digits). */
  sessionId(): string;
}

/**
 * The page a request for `pathAndQuery` (the request target, `/cal?month=3`) gets, or null when it is none of the
 * site's (a 404).
 */
export function trapAnswer(pathAndQuery: string, ctx: TrapContext): TrapAnswer | null {
  const url = new URL(pathAndQuery, 'http://trap.invalid');
  const p = url.pathname;
  const q = url.searchParams;
  if (p === '/' || p === '/index.html') return page('traps home', homeLinks());
  let m = /^\/section\/(\d+)$/.exec(p);
  if (m && within(m[1]!, TRAP_SECTIONS)) {
    const s = Number(m[1]);
    return page(`section ${s}`, ['/', ...Array.from({ length: TRAP_ARTICLES / TRAP_SECTIONS }, (_, i) => `/article/${(s - 1) * 10 + i + 1}`)]);
  }
  m = /^\/article\/(\d+)\/?$/.exec(p);
  if (m && within(m[1]!, TRAP_ARTICLES)) {
    const n = Number(m[1]);
    return page(`article ${n}`, ['/', `/section/${Math.ceil(n / 10)}`, `/article/${(n % TRAP_ARTICLES) + 1}`]);
  }
  if (p === '/docs/' || p === '/docs/index.html') return page('docs', ['/']);
  if (p === '/list') return page(`list ${[...q].map(([k, v]) => `${k}=${v}`).sort().join('&')}`, ['/']);
  if (p === '/caf%C3%A9' || p === '/caf%c3%a9') return page('café', ['/']);
  if (p === '/cal') {
    const month = Number.parseInt(q.get('month') ?? '0', 10) || 0;
    return page(`calendar month ${month}`, [`/cal?month=${month - 1}`, `/cal?month=${month + 1}`, '/']);
  }
  if (p.startsWith('/deep/')) return page(`deep ${p.split('/').length - 2}`, ['a/']);
  if (p === '/shop' || /^\/shop\/product\/\d+$/.test(p)) {
    // A new session for every answer: the links of two fetches of one page never agree.
    const sid = ctx.sessionId();
    return page(`shop ${p}`, [`/shop?sid=${sid}`, ...Array.from({ length: SHOP_PRODUCTS }, (_, i) => `/shop/product/${i + 1}?sid=${sid}`)]);
  }
  if (p === '/big') return page('big', Array.from({ length: BIG_PAGE_LINKS }, (_, i) => `/big/item/${i + 1}`));
  if (/^\/big\/item\/\d+$/.test(p)) return page(`big ${p}`, []);
  if (p === '/dups') return page('dups', [], { raw: dupsLinks(ctx.origin) });
  if (p === '/directives') return page('directives', [], { head: '<link rel="next" href="/via-next">', raw: directiveLinks(ctx) });
  if (p === '/nofollow-meta') return page('nofollow meta', ['/secret/meta'], { head: '<meta name="robots" content="noindex, nofollow">' });
  if (p === '/nofollow-header') return page('nofollow header', ['/secret/header'], { headers: { 'x-robots-tag': 'nofollow' } });
  if (p === '/noindex') return page('noindex', ['/indexed-from-noindex'], { head: '<meta name="robots" content="noindex">' });
  if (p === '/base-relative') return page('base', ['target'], { head: '<base href="/based/">' });
  if (p === '/base-offsite') return page('base offsite', ['page/1'], { head: `<base href="${ctx.offsite ?? 'http://offsite.invalid'}/">` });
  if (p === '/canonical-dup') return page('canonical', [], { head: '<link rel="canonical" href="/canonical-target">' });
  if (p === '/refresh') return page('refresh', [], { head: '<meta http-equiv="refresh" content="0; url=/refreshed">' });
  if (p.startsWith('/long/')) return page('long', ['/']);
  if (p === '/redirect/offsite') return redirect(ctx.offsite === undefined ? null : `${ctx.offsite}/page/1`);
  // Offsite and back: an open redirector on another host sends the client home again.
  if (p === '/redirect/roundtrip') return redirect(ctx.offsite === undefined ? null : `${ctx.offsite}/__sim/redirect?to=${encodeURIComponent(`${ctx.origin}/article/7`)}`);
  if (p === '/redirect/old-article') return redirect(`${ctx.origin}/article/1`);
  if (p === '/redirect/chain') return redirect('/redirect/old-article');
  if (/^\/(secret|based|indexed-from-noindex|canonical-target|refreshed|area|frame|proto-relative|spaced|entity|via-next)\b/.test(p)) return page(`leaf ${p}`, []);
  return null;
}

/**
 * The resource a request of the trap site stands for: requests with the same one got the same page, so two of them in
 * one crawl are one page fetched twice. The path and query with spellings of one page made equal (escapes' case,
 * parameter order, session ids, `index.html`, a trailing slash).
 */
export function trapResourceOf(pathAndQuery: string): string {
  const url = new URL(pathAndQuery, 'http://trap.invalid');
  let p = url.pathname.replace(/%[0-9a-f]{2}/gi, (e) => e.toUpperCase()).replace(/\/index\.html$/, '/');
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  url.searchParams.delete('sid');
  url.searchParams.sort();
  const query = url.searchParams.toString();
  return query === '' ? p : `${p}?${query}`;
}

/** The part of the trap site a request was for: `real` (home, sections, articles) or the trap's name. */
export function trapAreaOf(pathAndQuery: string): string {
  const p = new URL(pathAndQuery, 'http://trap.invalid').pathname;
  if (p === '/' || p === '/index.html' || p.startsWith('/section/') || p.startsWith('/article/')) return 'real';
  const first = p.split('/')[1] ?? '';
  return ['cal', 'deep', 'shop', 'big'].includes(first) ? first : 'other';
}

const HTML = { 'content-type': 'text/html; charset=utf-8' };

function within(n: string, max: number): boolean {
  const v = Number(n);
  return v >= 1 && v <= max;
}

function redirect(to: string | null): TrapAnswer | null {
  return to === null ? null : { status: 302, headers: { location: to }, body: '' };
}

/** An article with text enough to pass for a server-rendered page, `links` in its nav, `head` and `raw` markup as written. */
function page(title: string, links: string[], extra: { head?: string; raw?: string; headers?: Record<string, string> } = {}): TrapAnswer {
  const body = staticArticle({ title, links, ...(extra.head ? { head: extra.head } : {}) });
  return { status: 200, headers: { ...HTML, ...extra.headers }, body: extra.raw ? body.replace('</main>', `</main>\n${extra.raw}`) : body };
}

function homeLinks(): string[] {
  return [
    ...Array.from({ length: TRAP_SECTIONS }, (_, i) => `/section/${i + 1}`),
    '/cal?month=0', '/deep/', '/shop', '/big', '/dups', '/directives',
  ];
}

function dupsLinks(origin: string): string {
  const upper = origin.replace(/^http:\/\//, 'HTTP://');
  const spellings = [
    '/article/1', '/article/1#comments', '/article/1?', `${upper}/article/1`, '/article/1/', '/./article/1', '/x/../article/1',
    '/list?a=1&b=2', '/list?b=2&a=1', '/list?a=1&amp;b=2',
    '/caf%c3%a9', '/caf%C3%A9', '/café',
    '/docs/', '/docs/index.html',
  ];
  return spellings.map((s) => `<a href="${s}">${s}</a>`).join('\n');
}

function directiveLinks(ctx: TrapContext): string {
  const host = new URL(ctx.origin).host;
  const long = (n: number) => `/long/${'x'.repeat(n)}`;
  return `<a href="/secret/rel" rel="nofollow">rel nofollow</a>
<a href="/nofollow-meta">meta nofollow</a> <a href="/nofollow-header">header nofollow</a> <a href="/noindex">noindex</a>
<a href="/base-relative">base</a> <a href="/base-offsite">base offsite</a> <a href="/canonical-dup">canonical</a>
<map name="m"><area href="/area" shape="rect" coords="0,0,1,1"></map> <iframe src="/frame"></iframe>
<a href="/refresh">refresh</a>
<a href="javascript:void(0)">js</a> <a href="mailto:a@b.test">mail</a> <a href="tel:+15551234">tel</a> <a href="data:text/html,hi">data</a>
<a href="//${host}/proto-relative">protocol-relative</a>
<a href="  /spa
ced  ">spaced</a>
<a href="/entity?a=1&amp;b=2">entity</a>
<a href="http://bücher.example/">idn</a>
<a href="${long(2_100)}">long 2100</a> <a href="${long(8_100)}">long 8100</a>
<a href="/redirect/offsite">offsite</a> <a href="/redirect/roundtrip">roundtrip</a>
<a href="/redirect/old-article">to an article</a> <a href="/redirect/chain">chain</a>`;
}
