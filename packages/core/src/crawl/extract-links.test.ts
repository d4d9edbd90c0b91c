import { describe, expect, it, vi } from 'vitest';
import { MAX_OPEN_ELEMENTS } from './html-events.js';
import { compileTrackingParams } from './crawl-url.js';
import { extractLinks, robotsHeaderNofollow } from './extract-links.js';

const PAGE = 'https://site.test/dir/page.html';

describe('extractLinks', () => {
  it('takes a, area, iframe, frame and link rel=next; not scripts, styles, images or other links', () => {
    const html = `<html><head><link rel="stylesheet" href="/s.css"><link rel="next" href="p2"><script src="/app.js"></script>
      <link rel="icon" href="/fav.ico"></head><body><a href="a">A</a><img src="/i.png"><map><area href="/area" shape="rect"></map>
      <iframe src="frame.html"></iframe><frameset><frame src="/f2"></frameset><video src="/v.mp4"></video></body></html>`;
    expect(extractLinks(html, PAGE).links.map((l) => l.url)).toEqual([
      'https://site.test/dir/p2', 'https://site.test/dir/a', 'https://site.test/area', 'https://site.test/dir/frame.html', 'https://site.test/f2',
    ]);
  });

  it('takes the URL of a <meta http-equiv=refresh> and of a Refresh header, in the spellings sites use', () => {
    const html = `<meta http-equiv="Refresh" content="0; URL='moved.html?a=1&amp;b=2'"><meta http-equiv="refresh" content="30"><a href="/a">a</a>`;
    expect(extractLinks(html, PAGE, { refreshHeader: '5;url=/from-header' }).links.map((l) => l.url)).toEqual([
      'https://site.test/from-header', 'https://site.test/dir/moved.html?a=1&b=2', 'https://site.test/a',
    ]);
    expect(extractLinks('<meta http-equiv="refresh" content="0, https://other.test/x">', PAGE).links.map((l) => l.url)).toEqual(['https://other.test/x']);
    expect(extractLinks('<meta http-equiv="refresh" content="2;url=/y">', PAGE, { refreshHeader: '60' }).links.map((l) => l.url)).toEqual(['https://site.test/y']);
  });

  it('names where a refresh lands: the header first, as browsers read it, else the first meta', () => {
    const html = `<a href="/a">a</a><meta http-equiv="refresh" content="0; url=/meta"><meta http-equiv="refresh" content="0; url=/second">`;
    expect(extractLinks(html, PAGE, { refreshHeader: '0;url=/header' }).refresh).toBe('https://site.test/header');
    expect(extractLinks(html, PAGE).refresh).toBe('https://site.test/meta');
    // A link to the same page found first does not hide that the refresh goes there too.
    expect(extractLinks('<a href="/meta">m</a><meta http-equiv="refresh" content="0; url=/meta">', PAGE).refresh).toBe('https://site.test/meta');
    expect(extractLinks('<meta http-equiv="refresh" content="30"><a href="/a">a</a>', PAGE).refresh).toBeNull();
  });

  it('resolves against the first <base>, itself relative to the page', () => {
    const html = '<a href="x">x</a><base href="/other/"><base href="https://ignored.test/"><a href="y?b=1&amp;c=2#f">y</a>';
    expect(extractLinks(html, PAGE).links.map((l) => l.url)).toEqual(['https://site.test/other/x', 'https://site.test/other/y?b=1&c=2']);
  });

  it('marks nofollow per link and for the whole page by robots meta', () => {
    const html = '<a href="/a" rel="nofollow noopener">a</a><a href="/b" rel="NoFollow">b</a><a href="/c">c</a><a href="/b">b again</a>';
    expect(extractLinks(html, PAGE).links).toEqual([
      { url: 'https://site.test/a', nofollow: true },
      { url: 'https://site.test/b', nofollow: false },
      { url: 'https://site.test/c', nofollow: false },
    ]);
    const all = extractLinks('<meta name="ROBOTS" content="noindex, nofollow"><a href="/z">z</a>', PAGE);
    expect(all.nofollowAll).toBe(true);
    expect(all.links).toEqual([{ url: 'https://site.test/z', nofollow: true }]);
  });

  it('dedupes fragment and tracking variants and skips unfetchable schemes', () => {
    const html = `<a href="/p#one">1</a><a href="/p#two">2</a><a href="/p?utm_source=n&fbclid=1">3</a><a href="mailto:x@y.z">m</a>
      <a href="javascript:void(0)">j</a><a href="#top">t</a><a href="">empty</a><a>none</a><a href="http://[bad">bad</a>`;
    const links = extractLinks(html, PAGE).links.map((l) => l.url);
    expect(links).toEqual(['https://site.test/p']);
  });

  it('reads the canonical link, canonicalized, and takes a custom tracking list', () => {
    const r = extractLinks('<link rel="canonical" href="/Main?sid=9&utm_medium=x"><a href="/q?sid=1">q</a>', PAGE, { trackingParams: compileTrackingParams(['sid']) });
    expect(r.canonical).toBe('https://site.test/Main?utm_medium=x');
    expect(r.links.map((l) => l.url)).toEqual(['https://site.test/q']);
  });

  it('caps the number of links and counts the rest', () => {
    const html = Array.from({ length: 50 }, (_, i) => `<a href="/p${i}">${i}</a>`).join('');
    const r = extractLinks(html, PAGE, { maxLinks: 10 });
    expect(r.links).toHaveLength(10);
    expect(r.truncated).toBe(40);
  });

  it('reads a page the same with or without a <base> (resolved during the parse only without one)', () => {
    // Past the batch resolved during the parse (1,024 raw values), with repeats across batches, nofollow mixed in, a
    // Refresh header, and a meta refresh past the cap.
    const anchors = Array.from({ length: 3000 }, (_, i) => `<a href="/p${i % 2500}"${i % 7 === 0 ? ' rel=nofollow' : ''}>${i}</a>`).join('');
    const body = `<a href="/a" rel=nofollow>a</a><a href="/b">b</a>${anchors}<a href="/a">a again</a><meta http-equiv=refresh content="0; url=/r">`;
    const opts = { maxLinks: 2000, refreshHeader: '5; url=/h' };
    const without = extractLinks(body, 'https://site.test/', opts);
    // The same page with a <base> that changes nothing, late and in capitals: its links wait for the parse's end.
    const withBase = extractLinks(`${body}<BASE\nhref="https://site.test/">`, 'https://site.test/', opts);
    expect(without).toEqual(withBase);
    expect(without.links).toHaveLength(2000);
    expect(without.links.slice(0, 4).map((l) => l.url)).toEqual(['/h', '/a', '/b', '/p0'].map((p) => `https://site.test${p}`));
    expect(without.links[1]).toEqual({ url: 'https://site.test/a', nofollow: false });
    // /p1997../p2499 once each (503), their repeats /p0../p499 are known; the meta refresh (1).
    expect(without.truncated).toBe(504);
    expect(without.refresh).toBe('https://site.test/h');
  });

  it('makes every link nofollow for a robots meta that comes after them', () => {
    const anchors = Array.from({ length: 1500 }, (_, i) => `<a href="/p${i}">${i}</a>`).join('');
    const r = extractLinks(`${anchors}<a href="/b" rel=nofollow>b</a><meta name=robots content=none>`, PAGE);
    expect(r.nofollowAll).toBe(true);
    expect(r.links).toHaveLength(1501);
    expect(r.links.every((l) => l.nofollow)).toBe(true);
  });

  it('survives hostile markup', () => {
    const html = `<a href="/ok">ok</a><a href='/single'>s</a><a href=/bare>b</a><script>document.write('<a href="/in-script">')</script>
      <!-- <a href="/commented"> --><a href="/unclosed`;
    const links = extractLinks(html, PAGE).links.map((l) => l.url);
    expect(links).toContain('https://site.test/ok');
    expect(links).toContain('https://site.test/single');
    expect(links).toContain('https://site.test/bare');
    expect(links).not.toContain('https://site.test/in-script');
    expect(links).not.toContain('https://site.test/commented');
  });
});

describe('robotsHeaderNofollow', () => {
  it('reads nofollow and none for every crawler, not for one named crawler', () => {
    expect(robotsHeaderNofollow('noindex, NOFOLLOW')).toBe(true);
    expect(robotsHeaderNofollow('none')).toBe(true);
    expect(robotsHeaderNofollow('max-snippet: 20, nofollow')).toBe(true);
    expect(robotsHeaderNofollow('noindex')).toBe(false);
    expect(robotsHeaderNofollow('otherbot: noindex, nofollow')).toBe(false);
    expect(robotsHeaderNofollow(undefined)).toBe(false);
  });
});

describe('extractLinks on a page nested past MAX_OPEN_ELEMENTS', () => {
  it('reads every link of a page nested 20,000 deep, and its parser never holds more than MAX_OPEN_ELEMENTS open elements', () => {
    // htmlparser2 unshifts each opened element into its stack, a cost of the stack's length: record the longest.
    let longest = 0;
    let calls = 0;
    const unshift = Array.prototype.unshift;
    const spy = vi.spyOn(Array.prototype, 'unshift').mockImplementation(function (this: unknown[], ...items: unknown[]) {
      calls += 1;
      longest = Math.max(longest, this.length);
      return unshift.apply(this, items);
    });
    let r: ReturnType<typeof extractLinks> | undefined;
    try {
      r = extractLinks(`<html><body><a href="/before">b</a>${'<div class="x"><span>t</span>'.repeat(20_000)}<a href="/after">a</a></body></html>`, 'https://site.test/');
    } finally {
      spy.mockRestore();
    }
    expect(r?.links.map((l) => l.url)).toEqual(['https://site.test/before', 'https://site.test/after']);
    expect(calls).toBeGreaterThan(20_000);
    expect(longest).toBeLessThanOrEqual(MAX_OPEN_ELEMENTS);
  });

  it('does not read the body of a <script> opened at the limit as markup', () => {
    // html, body and 509 divs: the <script> is the 512th open element, where the parser hands over the rest.
    const html = `<html><body>${'<div>'.repeat(MAX_OPEN_ELEMENTS - 3)}<script>document.write('<a href="/fake">x</a>')</script><a href="/real">r</a></body></html>`;
    expect(extractLinks(html, 'https://site.test/').links.map((l) => l.url)).toEqual(['https://site.test/real']);
  });
});

describe('extractLinks on end tags that close nothing', () => {
  /** Links of `html`, and the elements htmlparser2's open-element lookups (indexOf) and insertions (unshift) go through. */
  function scannedWhileExtracting(html: string): { urls: string[]; scanned: number } {
    let scanned = 0;
    const { indexOf, unshift } = Array.prototype;
    const spies = [
      vi.spyOn(Array.prototype, 'indexOf').mockImplementation(function (this: unknown[], ...args: [unknown, number?]) {
        scanned += this.length;
        return indexOf.apply(this, args);
      }),
      vi.spyOn(Array.prototype, 'unshift').mockImplementation(function (this: unknown[], ...items: unknown[]) {
        scanned += this.length;
        return unshift.apply(this, items);
      }),
    ];
    try {
      return { urls: extractLinks(html, 'https://site.test/').links.map((l) => l.url), scanned };
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  }

  it("reads past 20,000 stray end tags at depth 510 without searching the parser's open elements for each", () => {
    // An implied <p> at depth 511 does not reach MAX_OPEN_ELEMENTS, so no hand-over empties the parser's stack.
    const page = (stray: string) => `<html><body><a href="/before">b</a>${'<div>'.repeat(MAX_OPEN_ELEMENTS - 4)}${stray}<a href="/after">a</a></body></html>`;
    const strays = ['</x>', '</p>', '</svg>', '</title>', '</img>', '</br>', '</mi>', '</desc>'];
    const nested = scannedWhileExtracting(page(''));
    const stray = scannedWhileExtracting(page(strays.join('').repeat(20_000 / strays.length)));
    expect(stray.urls).toEqual(['https://site.test/before', 'https://site.test/after']);
    expect(nested.scanned).toBeGreaterThan(MAX_OPEN_ELEMENTS);
    expect(stray.scanned - nested.scanned).toBeLessThan(20_000);
  });
});
