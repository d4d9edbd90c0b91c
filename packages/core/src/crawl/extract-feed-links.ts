import { canonicalCrawlUrl } from './crawl-url.js';
import { extractLinks, type ExtractLinksOptions, type PageLinks } from './extract-links.js';
import { createHtmlParser, decodeXmlText } from './html-events.js';

/** What an XML document is to a crawl, by its root element. */
export type XmlDocumentKind = 'feed' | 'html' | 'other';

/** Links of an XML document, with what it turned out to be. */
export interface XmlPageLinks extends PageLinks {
  kind: XmlDocumentKind;
}

/** Root elements (local names) of RSS 2.0/0.9x, Atom and RSS 1.0 (`<rdf:RDF>`). */
const FEED_ROOTS = new Set(['rss', 'feed', 'rdf']);
/** Elements whose `<link>` names a page: the channel's (the site) and each entry's. Not `<image>`, `<textInput>`, `<source>`. */
const LINK_PARENTS = new Set(['channel', 'item', 'feed', 'entry']);
/** Atom link relations that name a page to crawl: the entry itself (the default) and the feed's next page (RFC 5005). */
const FOLLOWED_RELS = new Set(['alternate', 'next']);
/** XML's own entities: any other `&name;` is one a DTD would have to define, and that is never expanded here. */
const UNDEFINED_ENTITY = /&(?!(?:amp|lt|gt|quot|apos);)[A-Za-z_][\w.-]*;/;

/**
 * The links of an XML document a crawl fetched, decided by its root element: an RSS, Atom or RSS 1.0 feed gives its
 * entries' links (`<item><link>`, `<entry><link href>` with no rel or rel=alternate, `<guid>` when it is a permalink
 * written as an absolute URL) and the channel's own link and rel=next, resolved against `xml:base` (nested, as Atom
 * allows) and the feed's URL; an `<html>` root is a page (XHTML, or HTML labelled XML) and is read as one; anything
 * else has no links. The parse is htmlparser2's tokenizer in XML mode: a DOCTYPE is skipped, never read, so no entity
 * a DTD defines is expanded and nothing it names is fetched; a value that uses one is dropped. Pure.
 */
export function extractXmlLinks(xml: string, pageUrl: string, opts: ExtractLinksOptions = {}): XmlPageLinks {
  const maxLinks = opts.maxLinks ?? 5000;
  let kind = null as XmlDocumentKind | null;
  // One entry per open element: its local name and the base its relative URLs resolve against.
  const stack: Array<{ name: string; base: string }> = [];
  const raw: Array<{ value: string; base: string; absoluteOnly: boolean }> = [];
  let collecting: { base: string; absoluteOnly: boolean; depth: number } | null = null;
  let text = '';
  let cdata = false;
  const local = (name: string): string => name.slice(name.indexOf(':') + 1).toLowerCase();
  const parser = createHtmlParser(
    {
      onopentag(name, attribs) {
        const n = local(name);
        if (kind === null) kind = FEED_ROOTS.has(n) ? 'feed' : n === 'html' ? 'html' : 'other';
        if (kind !== 'feed') return;
        const parent = stack[stack.length - 1];
        let base = parent?.base ?? pageUrl;
        const xmlBase = attribs['xml:base'];
        if (xmlBase !== undefined && !UNDEFINED_ENTITY.test(xmlBase)) {
          try {
            base = new URL(decodeXmlText(xmlBase).trim(), base).href;
          } catch {
            // An unusable xml:base is ignored: the parent's base stands.
          }
        }
        stack.push({ name: n, base });
        if (collecting !== null || parent === undefined) return;
        if (n === 'link' && LINK_PARENTS.has(parent.name)) {
          const href = attribs.href;
          if (href === undefined) collecting = { base, absoluteOnly: false, depth: stack.length };
          else {
            const rel = decodeXmlText(attribs.rel ?? 'alternate').trim().toLowerCase();
            if (FOLLOWED_RELS.has(rel)) raw.push({ value: href, base, absoluteOnly: false });
          }
        } else if (n === 'guid' && parent.name === 'item' && decodeXmlText(attribs.ispermalink ?? attribs.isPermaLink ?? 'true').trim() !== 'false') {
          // A guid is a permalink by default, but many feeds put ids there without saying isPermaLink="false": only an
          // absolute URL is taken, so an id is never resolved into a path of the feed's site.
          collecting = { base, absoluteOnly: true, depth: stack.length };
        }
        if (collecting !== null) text = '';
      },
      oncdatastart() {
        cdata = true;
      },
      oncdataend() {
        cdata = false;
      },
      ontext(data) {
        // CDATA is literal: its `&` is not an entity, so it is escaped for the one decode at the end.
        if (collecting !== null) text += cdata ? data.replaceAll('&', '&amp;') : data;
      },
      onclosetag() {
        if (kind !== 'feed') return;
        if (collecting !== null && collecting.depth === stack.length) {
          raw.push({ value: text, base: collecting.base, absoluteOnly: collecting.absoluteOnly });
          collecting = null;
        }
        stack.pop();
      },
    },
    { xml: true },
  );
  parser.end(xml);
  if (kind === 'html') return { kind, ...extractLinks(xml, pageUrl, opts) };

  const byUrl = new Map<string, { url: string; nofollow: boolean }>();
  // As in extractLinks: each spelling resolved once, none past the cap.
  const spellings = new Set<string>();
  let truncated = 0;
  for (const r of raw) {
    const spelling = `${r.base}\n${r.value}`;
    if (spellings.has(spelling)) continue;
    if (byUrl.size >= maxLinks) {
      truncated += 1;
      continue;
    }
    spellings.add(spelling);
    if (UNDEFINED_ENTITY.test(r.value)) continue;
    const value = decodeXmlText(r.value).trim();
    if (r.absoluteOnly && !/^https?:\/\//i.test(value)) continue;
    const url = canonicalCrawlUrl(value, r.base, opts.trackingParams);
    if (url !== null && !byUrl.has(url)) byUrl.set(url, { url, nofollow: false });
  }
  return { kind: kind ?? 'other', links: [...byUrl.values()], canonical: null, nofollowAll: false, truncated };
}

/**
 * Whether a body labelled HTML (or not labelled) is a feed: its first element, after an XML declaration, comments,
 * processing instructions and a DOCTYPE (its internal subset too), is `<rss>`, `<feed>` or `<rdf:RDF>`. A PHP script
 * that writes a feed without setting its Content-Type sends it as text/html. Reads at most the first 4 KB (of text,
 * or of bytes as Latin-1).
 */
export function looksLikeFeed(text: string): boolean {
  const head = text.slice(0, 4096);
  // A UTF-8 byte-order mark, decoded or read as Latin-1 bytes.
  let i = head.charCodeAt(0) === 0xfeff ? 1 : head.startsWith('\xEF\xBB\xBF') ? 3 : 0;
  for (;;) {
    while (i < head.length && /\s/.test(head[i]!)) i += 1;
    if (head.startsWith('<?', i)) i = head.indexOf('?>', i);
    else if (head.startsWith('<!--', i)) i = head.indexOf('-->', i);
    else if (head.startsWith('<!', i)) {
      // A DOCTYPE's internal subset (`[<!ENTITY nbsp "&#160;">]`) holds '>'s of its own: it ends past its ']'.
      const close = head.indexOf('>', i);
      const subset = head.indexOf('[', i);
      i = subset !== -1 && (close === -1 || subset < close) ? head.indexOf(']', subset) : close;
    }
    else return /^<(?:rss|feed|rdf:rdf)[\s>/]/i.test(head.slice(i, i + 10));
    if (i === -1) return false;
    i = head.indexOf('>', i) + 1;
  }
}
