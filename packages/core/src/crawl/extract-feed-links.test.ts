import { describe, expect, it } from 'vitest';
import { extractXmlLinks, looksLikeFeed } from './extract-feed-links.js';
import { extractLinks } from './extract-links.js';

const FEED = 'https://site.test/blog/feed.xml';
const urls = (xml: string, url = FEED): string[] => extractXmlLinks(xml, url).links.map((l) => l.url);

describe('extractXmlLinks', () => {
  it('reads an RSS 2.0 feed: the channel link, item links and permalink guids, not ids, enclosures or images', () => {
    const rss = `<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>
      <title>t</title><link>https://site.test/</link><atom:link href="https://site.test/blog/feed.xml" rel="self"/>
      <image><url>https://site.test/logo.png</url><link>https://site.test/from-image</link></image>
      <item><title>a</title><link>https://site.test/posts/a?x=1&amp;y=2</link><guid isPermaLink="false">tag:site.test,2026:a</guid></item>
      <item><title>b</title><link><![CDATA[/posts/b?p=1&q=2]]></link><enclosure url="https://site.test/b.mp3" type="audio/mpeg"/></item>
      <item><title>c</title><guid>https://site.test/posts/c</guid></item>
      <item><title>d</title><guid>12345</guid><comments>https://site.test/posts/d#comments</comments></item>
    </channel></rss>`;
    expect(urls(rss)).toEqual(['https://site.test/', 'https://site.test/posts/a?x=1&y=2', 'https://site.test/posts/b?p=1&q=2', 'https://site.test/posts/c']);
  });

  it('reads an Atom feed: entry links with no rel or rel=alternate, rel=next, against nested xml:base', () => {
    const atom = `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://site.test/news/">
      <link rel="self" href="/feed.atom"/><link href="/"/><link rel="next" href="?page=2"/>
      <entry><link rel="alternate" type="text/html" href="one"/><link rel="enclosure" href="one.mp4"/><link rel="edit" href="/edit/1"/>
        <source><link href="https://elsewhere.test/"/></source></entry>
      <entry xml:base="2026/"><link href="two"/><link rel="replies" href="two#c"/></entry>
      <entry><link href="three?a=1&amp;b=2"/></entry>
    </feed>`;
    expect(urls(atom)).toEqual([
      'https://site.test/', 'https://site.test/news/?page=2', 'https://site.test/news/one', 'https://site.test/news/2026/two',
      'https://site.test/news/three?a=1&b=2',
    ]);
    expect(extractXmlLinks(atom, FEED).kind).toBe('feed');
  });

  it('reads an RSS 1.0 (RDF) feed, whose items are siblings of the channel, relative links against the feed URL', () => {
    const rdf = `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
      <channel rdf:about="https://site.test/"><link>https://site.test/</link></channel>
      <item rdf:about="https://site.test/i1"><link>i1</link></item><item><link>../i2</link></item></rdf:RDF>`;
    expect(urls(rdf)).toEqual(['https://site.test/', 'https://site.test/blog/i1', 'https://site.test/i2']);
  });

  it('never expands a DTD entity: billion laughs and external entities leave no link and cost one pass', () => {
    const laughs = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
    const xml = `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY lol0 "lol">${laughs}<!ENTITY xxe SYSTEM "http://127.0.0.1:1/secret">]>
      <rss><channel><item><link>&lol9;</link></item><item><link>https://site.test/&xxe;</link></item>
      <item><link xml:base="&xxe;">/kept</link></item><item><link>https://site.test/ok&amp;&#x41;</link></item></channel></rss>`;
    const got = extractXmlLinks(xml, FEED);
    expect(got.kind).toBe('feed');
    expect(got.links.map((l) => l.url)).toEqual(['https://site.test/kept', 'https://site.test/ok&A']);
  });

  it('reads HTML labelled as XML as the page it is, and finds nothing in other XML', () => {
    const page = '<!DOCTYPE html><html><head><title>x</title></head><body><a href="/from-html">a</a><p>unclosed<br></body></html>';
    const got = extractXmlLinks(page, FEED);
    expect(got.kind).toBe('html');
    expect(got.links.map((l) => l.url)).toEqual(['https://site.test/from-html']);
    expect(extractXmlLinks('<svg xmlns="http://www.w3.org/2000/svg"><a href="/x"><link href="/y"/></a></svg>', FEED)).toMatchObject({ kind: 'other', links: [] });
    expect(extractXmlLinks('not xml at all <<< &', FEED).links).toEqual([]);
  });

  it('keeps at most maxLinks distinct links, counting the rest', () => {
    const items = Array.from({ length: 3000 }, (_, i) => `<item><link>/p/${i % 2500}</link></item>`).join('');
    const got = extractXmlLinks(`<rss><channel>${items}</channel></rss>`, FEED, { maxLinks: 1000 });
    expect(got.links).toHaveLength(1000);
    expect(got.links[999]!.url).toBe('https://site.test/p/999');
    expect(got.truncated).toBe(1500);
  });
});

describe('looksLikeFeed', () => {
  it('sees a feed past a BOM, the XML declaration, comments, stylesheet PIs and a DOCTYPE, and nothing else', () => {
    expect(looksLikeFeed('\uFEFF<?xml version="1.0"?>\n<!-- generated --><?xml-stylesheet href="/rss.xsl"?>\n<rss version="2.0"><channel>')).toBe(true);
    expect(looksLikeFeed('<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"><rss>')).toBe(true);
    // A DOCTYPE with an internal subset (old RSS 0.91 feeds declare the HTML entities they use): its '>'s are its own.
    expect(looksLikeFeed('<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY nbsp "&#160;">\n<!ENTITY copy "&#169;">\n]>\n<rss version="0.91">')).toBe(true);
    expect(looksLikeFeed('<!DOCTYPE html [<!ENTITY x "y">]><html><rss>')).toBe(false);
    expect(looksLikeFeed('  <feed xmlns="http://www.w3.org/2005/Atom">')).toBe(true);
    expect(looksLikeFeed('<rdf:RDF xmlns:rdf="x">')).toBe(true);
    expect(looksLikeFeed('<!doctype html><html><body><rss>')).toBe(false);
    expect(looksLikeFeed('<feedback>')).toBe(false);
    expect(looksLikeFeed('<!-- never closed <rss>')).toBe(false);
    expect(looksLikeFeed('')).toBe(false);
  });
});

describe('extractLinks and feeds', () => {
  it("follows a page's <link rel=alternate> to its RSS or Atom feed, not its other alternates", () => {
    const html = `<link rel="alternate" type="application/rss+xml" href="/feed/"><link rel="Alternate" type="Application/Atom+XML" href="/atom.xml">
      <link rel="alternate" hreflang="fr" href="/fr/"><link rel="alternate" type="application/json" href="/wp-json/x">`;
    expect(extractLinks(html, 'https://site.test/').links.map((l) => l.url)).toEqual(['https://site.test/feed/', 'https://site.test/atom.xml']);
  });
});
