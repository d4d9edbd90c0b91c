import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { parse as parseDocument, serialize } from 'parse5';
import TurndownService from 'turndown';
import { MAX_SRCDOC_DEPTH, decodeBody, detectContentFamily, limitHtmlNesting } from '@crawler/core';

/** How a stored page is handed out: the bytes as fetched, its readable text, or its main content as Markdown. */
export const CONTENT_FORMATS = ['raw', 'text', 'markdown'] as const;
export type ContentFormat = (typeof CONTENT_FORMATS)[number];

/** A page that cannot be shown in the asked format (a PDF as Markdown): the caller answers 415. */
export class UnsupportedFormatError extends Error {
  readonly code = 'unsupported_format';
  constructor(readonly format: ContentFormat, readonly contentType: string | null) {
    super(`format '${format}' needs an HTML or text page (this one is ${contentType ?? 'of unknown type'})`);
  }
}

/** The page, as the converters read it. */
export interface PageForFormat {
  body: Uint8Array;
  /** The Content-Type header as fetched (with its charset), or the stored MIME type. */
  contentType: string | null;
  /** Base for relative links. */
  finalUrl: string;
}

/** A converted page. */
export interface FormattedContent {
  /** The article's title when Readability found one. */
  title: string | null;
  text: string;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

function mimeOf(contentType: string | null): string | null {
  return contentType ? contentType.split(';')[0]!.trim().toLowerCase() || null : null;
}

function isHtml(page: PageForFormat): boolean {
  const mime = mimeOf(page.contentType);
  if (mime) return HTML_TYPES.has(mime);
  // No type at all: sniff the first bytes as the fetcher and the validator did (a BOM, a leading comment included).
  return detectContentFamily(undefined, page.body.subarray(0, 512)) === 'html';
}

function isPlainText(page: PageForFormat): boolean {
  const mime = mimeOf(page.contentType);
  return mime !== null && (mime.startsWith('text/') || mime === 'application/json' || mime.endsWith('+json') || mime.endsWith('+xml') || mime === 'application/xml');
}

/** Blocks that start a new line in readable text. */
const BLOCK_TAGS = new Set([
  'ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BR', 'DD', 'DIV', 'DL', 'DT', 'FIGCAPTION', 'FIGURE', 'FOOTER', 'FORM',
  'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HEADER', 'HR', 'LI', 'MAIN', 'NAV', 'OL', 'P', 'PRE', 'SECTION', 'TABLE', 'TR', 'UL',
]);

interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  firstChild: DomNode | null;
  nextSibling: DomNode | null;
}

/** Text of a DOM subtree with one line per block and runs of whitespace collapsed. */
export function blockText(root: DomNode): string {
  const parts: string[] = [];
  const walk = (node: DomNode) => {
    if (node.nodeType === 3) {
      parts.push(node.textContent ?? '');
      return;
    }
    if (node.nodeType !== 1) return;
    if (node.nodeName === 'SCRIPT' || node.nodeName === 'STYLE' || node.nodeName === 'NOSCRIPT' || node.nodeName === 'TEMPLATE') return;
    const block = BLOCK_TAGS.has(node.nodeName);
    if (block) parts.push('\n');
    // Sibling links, not childNodes: linkedom builds a new NodeList on every read of it, so indexing it per child is
    // quadratic (65 s for a body of 20,000 blocks, with the event loop held).
    for (let child = node.firstChild; child; child = child.nextSibling) walk(child);
    if (block) parts.push('\n');
  };
  walk(root);
  return parts
    .join('')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line.length > 0)
    .join('\n');
}

/**
 * The document as a browser's parser builds it (parse5 follows the HTML standard's tree construction), written back
 * out whole: `<html>`, `<head>` and `<body>` always there, markup before `<html>` moved into the body, NULs dropped
 * from text. linkedom parses markup as it is written, so a page that leaves out those optional tags, or has a
 * server's notice printed before `<html>`, had no body for Readability to read: its text came out empty.
 */
function normalizeHtml(html: string): string {
  return serialize(parseDocument(html));
}

/** Parse, make links absolute, and let Readability pick the main content (the whole body when it finds none). */
function readArticle(page: PageForFormat): { title: string | null; html: string; dom: DomNode } {
  // linkedom and Readability walk the tree recursively: a hostile page nested thousands deep would hold the server
  // for seconds and then overflow the stack.
  const html = normalizeHtml(limitHtmlNesting(decodeBody(page.body, page.contentType ?? undefined, Number.POSITIVE_INFINITY)));
  const { document } = parseHTML(html);
  inlineSrcdocFrames(document);
  // linkedom has no base URL: Readability would keep relative hrefs, which mean nothing outside the page. They are
  // resolved as a browser would: against the first <base href> (itself against the page's URL), else the page's URL.
  const base = baseUrlOf(document.querySelector('base[href]')?.getAttribute('href') ?? null, page.finalUrl);
  for (const [selector, attr] of [['a[href]', 'href'], ['img[src]', 'src']] as const) {
    for (const el of Array.from(document.querySelectorAll(selector) as ArrayLike<Element>)) {
      const value = el.getAttribute(attr);
      if (!value) continue;
      try {
        el.setAttribute(attr, new URL(value, base).toString());
      } catch {
        // An unparseable href stays as it was.
      }
    }
  }
  const fallbackTitle = document.querySelector('title')?.textContent?.trim() || null;
  const bodyHtml = document.body?.innerHTML ?? html;
  // Readability mutates the document it reads: it gets its own parse.
  const article = new Readability(parseHTML(document.toString()).document as unknown as Document, { charThreshold: 100 }).parse();
  const content = article?.content ?? bodyHtml;
  const dom = parseHTML(`<!doctype html><html><body>${content}</body></html>`).document.body as unknown as DomNode;
  return { title: article?.title?.trim() || fallbackTitle, html: content, dom };
}

/**
 * Put the document of each `<iframe srcdoc>` in the body in place of its frame, as a browser shows it: an embedded
 * article is the page's text (the validator counts it too). Its links then resolve against the page's base, as a
 * srcdoc document's do. Frames that load a URL are other pages and stay out.
 */
function inlineSrcdocFrames(document: ReturnType<typeof parseHTML>['document']): void {
  for (let depth = 0; depth < MAX_SRCDOC_DEPTH; depth++) {
    const frames = Array.from(document.querySelectorAll('body iframe[srcdoc]') as ArrayLike<Element>);
    if (frames.length === 0) return;
    for (const frame of frames) {
      const srcdoc = frame.getAttribute('srcdoc') ?? '';
      const inner = parseHTML(normalizeHtml(limitHtmlNesting(srcdoc))).document;
      for (const el of Array.from(inner.querySelectorAll('body title, body script, body style') as ArrayLike<Element>)) el.remove();
      const div = document.createElement('div');
      div.innerHTML = inner.body?.innerHTML ?? '';
      frame.replaceWith(div);
    }
  }
}

/** The URL a page's relative links resolve against: its `<base href>` when that is a URL, else the page's own. */
function baseUrlOf(baseHref: string | null, pageUrl: string): string {
  if (baseHref === null) return pageUrl;
  try {
    return new URL(baseHref.trim(), pageUrl).toString();
  } catch {
    return pageUrl; // an unusable <base> is ignored, as browsers do
  }
}

let turndown: TurndownService | null = null;

function markdownOf(html: string): string {
  turndown ??= new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' }).remove(['script', 'style', 'noscript']);
  return turndown.turndown(html).trim();
}

/** The page's readable text: the main content, one line per block. Plain-text pages are decoded as they are. */
export function formatAsText(page: PageForFormat): FormattedContent {
  if (isHtml(page)) {
    const article = readArticle(page);
    const text = blockText(article.dom);
    return { title: article.title, text: article.title && !text.startsWith(article.title) ? `${article.title}\n\n${text}` : text };
  }
  if (isPlainText(page)) return { title: null, text: decodeBody(page.body, page.contentType ?? undefined, Number.POSITIVE_INFINITY) };
  throw new UnsupportedFormatError('text', page.contentType);
}

/** The page's main content as Markdown (headings, lists, links kept, absolute), its title as the first heading. */
export function formatAsMarkdown(page: PageForFormat): FormattedContent {
  if (isHtml(page)) {
    const article = readArticle(page);
    const body = markdownOf(article.html);
    const hasTitle = article.title !== null && /^#\s/.test(body) && body.split('\n', 1)[0]!.slice(2).trim() === article.title;
    return { title: article.title, text: article.title && !hasTitle ? `# ${article.title}\n\n${body}` : body };
  }
  if (isPlainText(page)) return { title: null, text: decodeBody(page.body, page.contentType ?? undefined, Number.POSITIVE_INFINITY) };
  throw new UnsupportedFormatError('markdown', page.contentType);
}
