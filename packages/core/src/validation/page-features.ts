import { Parser, type Handler } from 'htmlparser2';
import { decodeHTML } from 'entities';
import { MAX_OPEN_ELEMENTS, OpenElements, RAW_TEXT_ELEMENTS } from '../crawl/html-events.js';

/** What the detectors look at, extracted from one parse of the HTML. */
export interface PageFeatures {
  /** Raw HTML as analysed. */
  html: string;
  /** Lower-cased raw HTML, for marker matching. */
  htmlLower: string;
  /** htmlLower without the contents of <pre>, <code> and <textarea>: live markup, not quoted examples. */
  markupLower: string;
  /** Document title, whitespace collapsed. */
  title: string;
  /** Visible body text, whitespace collapsed (script, style, template, noscript, svg removed; an `<iframe srcdoc>`'s text in place). */
  visibleText: string;
  /** Text inside <noscript>, whitespace collapsed. */
  noscriptText: string;
  /** Bytes of <script> elements (tags and content) over HTML bytes. */
  scriptRatio: number;
  /** Number of <script> elements. */
  scriptCount: number;
  /** Elements in <body> that are not script/style/link/meta/noscript/template. */
  bodyElementCount: number;
  /** Links (<a href>) in the page. */
  linkCount: number;
  /** ids of body elements with at most placeholder text (mount-point candidates). */
  emptyMountIds: string[];
  /**
   * Form fields a person types data into (text, email, password… inputs, textareas, selects), not counting hidden
   * fields, buttons and fields named for a captcha answer. A login or contact form has them; a captcha gate has none.
   */
  dataFieldCount: number;
}

/** Elements whose text a reader never sees; their subtrees are skipped. */
export const INVISIBLE = new Set(['script', 'style', 'template', 'noscript', 'svg', 'iframe', 'object', 'title']);
/** Elements that are not page content when counting structure. */
export const NON_CONTENT_TAGS = new Set(['html', 'head', 'body', 'title', 'script', 'style', 'link', 'meta', 'noscript', 'template', 'base']);
/** Elements after which text flows to a new line: a space keeps their words apart in the collapsed text. */
export const BLOCK_TAGS = new Set(['p', 'div', 'br', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'tr', 'td', 'th', 'section', 'article', 'header', 'footer', 'nav', 'main', 'aside', 'ul', 'ol', 'table', 'form', 'blockquote', 'pre', 'hr', 'dd', 'dt', 'dl', 'figure', 'figcaption', 'address', 'button', 'label', 'option']);
/** Input types that carry no user data: a form made only of these is a challenge or a button, not a login/contact form. */
const NON_DATA_INPUT_TYPES = new Set(['hidden', 'submit', 'button', 'image', 'reset', 'checkbox', 'radio', 'file', 'range', 'color']);
/** A field whose id/name/class says it holds the answer to a captcha (Amazon's and shared hosts' text captchas). */
const CAPTCHA_FIELD = /captcha|challenge/i;

/** Whether an element is a field a person fills in with their own data. */
export function isDataField(name: string, attribs: Record<string, string> | undefined): boolean {
  if (name !== 'input' && name !== 'textarea' && name !== 'select') return false;
  const a = attribs ?? {};
  if (name === 'input' && NON_DATA_INPUT_TYPES.has((a.type ?? 'text').trim().toLowerCase())) return false;
  return !CAPTCHA_FIELD.test(`${a.id ?? ''} ${a.name ?? ''} ${a.class ?? ''}`);
}

/** Text a mount point may hold and still be a placeholder ("Loading…", "Please wait"), in non-blank characters. */
export const MAX_PLACEHOLDER_CHARS = 40;
/**
 * `<iframe srcdoc>` documents read inside one another at most: a browser shows each in place, and a page nesting more
 * is playing games (each level is the one above escaped again, so the bytes grow with the depth).
 */
export const MAX_SRCDOC_DEPTH = 3;
/** Ids collected as mount candidates; shells have a handful, and a huge page must not cost more. */
export const MAX_MOUNT_CANDIDATES = 200;

/** Collapse runs of whitespace so length measures text, not indentation. */
export function collapseWhitespace(s: string): string {
  // Only runs that are not already a single space are replaced: on prose that is a few matches instead of one per
  // word, several times faster on a 2 MiB page.
  return s.replace(/ \s+|[^\S ]\s*/g, ' ').trim();
}

/** Han, kana and Hangul: one such character carries about as much text as two or three Latin letters. */
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/g;

/**
 * How much text a page shows, in Latin-letter equivalents, for the "under 200 characters" thresholds: CJK characters
 * count double, so a short Chinese or Korean notice is not taken for an empty page. Equals `text.length` for
 * alphabetic scripts; only computed in full below the threshold region (the weight is never below the length).
 */
export function textWeight(text: string, cap = 1000): number {
  if (text.length >= cap) return text.length;
  return text.length + (text.match(CJK)?.length ?? 0);
}

/** Characters that are not whitespace (ASCII whitespace and NBSP), counted without allocating, up to `max`. */
function countNonBlank(s: string, max: number): number {
  let n = 0;
  for (let i = 0; i < s.length && n < max; i++) {
    const c = s.charCodeAt(i);
    if (c > 32 && c !== 160) n += 1;
  }
  return n;
}

/** The Tokenizer's private state the fast path reads or replaces (htmlparser2 10.1's; checked at load). */
interface TokenizerInternals {
  /** True while inside a raw-text element (script, style, textarea, xmp) or <title>. */
  isSpecial: boolean;
  /** The state machine's state (an enum); ontext in the text state is a run of text, otherwise leftover markup. */
  state: number;
  buffer: string;
  index: number;
  offset: number;
  fastForwardTo(c: number): boolean;
}

function internalsOf(parser: Parser): TokenizerInternals {
  return (parser as unknown as { tokenizer: TokenizerInternals }).tokenizer;
}

/**
 * Whether the installed htmlparser2 (a direct dependency, pinned to the version cheerio runs) still has the private
 * Tokenizer fields the fast path relies on, and they behave as it expects: field types, plus a probe parse in which
 * <title> text is "special" and body text is seen in the initial (text) state. When they do not, extractPageFeatures
 * takes the public-API path: the same results, slower on articles. A test requires this to be true, so an upgrade
 * that moves the internals fails loudly instead of silently slowing down.
 */
export const TOKENIZER_INTERNALS_MATCH: boolean = (() => {
  try {
    const seen: [string, boolean, boolean][] = [];
    const probe: Parser = new Parser(
      { ontext: (t) => void seen.push([t, internalsOf(probe).isSpecial, internalsOf(probe).state === textState]) },
      { xmlMode: false, decodeEntities: false },
    );
    const t = internalsOf(probe);
    const textState = t.state;
    const typed = typeof t.isSpecial === 'boolean' && typeof t.state === 'number' && typeof t.buffer === 'string' && typeof t.index === 'number' && typeof t.offset === 'number' && typeof t.fastForwardTo === 'function';
    if (!typed) return false;
    t.fastForwardTo = fastForwardTo;
    probe.end('<title>a &amp; b</title><p>c &amp; d</p>');
    return JSON.stringify(seen) === JSON.stringify([['a &amp; b', true, false], ['c &amp; d', false, true]]);
  } catch {
    return false;
  }
})();

/**
 * Entities are decoded afterwards, only in the text we keep: the tokenizer runs about three times faster without
 * decoding (it skips to the next `<` instead of stepping through every character looking for `&`). A text event is
 * one whole run between tags, so decoding it gives what the decoding tokenizer would emit (legacy mode, as in
 * text). Not decoded, as the decoding tokenizer does not either: text of raw-text elements (script, style,
 * textarea, xmp) and what is left of an unfinished construct at the end (`</"…`, `<!…`). <title> text is decoded
 * except right after a `<` or `</` (a possible end tag), so a title with an `&` is re-tokenized as one.
 */
function decodeText(data: string, kind: 'text' | 'title' | 'raw'): string {
  if (kind === 'raw' || !data.includes('&')) return data;
  if (kind === 'text') return decodeHTML(data);
  let out = '';
  new Parser(
    {
      ontext(t) {
        out += t;
      },
    },
    { xmlMode: false, decodeEntities: true },
  ).end(`<title>${data}`);
  return out;
}

/**
 * The attributes of the open tag at `source`, decoded exactly as the decoding tokenizer would (an attribute's
 * entity rules differ from text's): only needed for the rare attribute value we read that contains `&`.
 */
function decodedAttribs(source: string): Record<string, string> {
  let out: Record<string, string> = {};
  new Parser(
    {
      onopentag(_name, attribs) {
        out = attribs;
      },
    },
    { xmlMode: false, decodeEntities: true },
  ).end(source);
  return out;
}

/**
 * The tokenizer's `fastForwardTo` (skip to the next `<`, quote or `>`), with the same effect on its state, but by
 * `indexOf` rather than a loop over char codes: without entity decoding, text is skipped this way, and this makes it
 * several times faster. Installed only when TOKENIZER_INTERNALS_MATCH.
 */
function fastForwardTo(this: TokenizerInternals, c: number): boolean {
  const i = this.buffer.indexOf(String.fromCharCode(c), this.index + 1 - this.offset);
  if (i === -1) {
    this.index = this.buffer.length + this.offset - 1;
    return false;
  }
  this.index = i + this.offset;
  return true;
}


/** Attributes read by the walk (mount ids, form field kinds); others are only tested for presence. */
const READ_ATTRIBUTES = ['id', 'type', 'name', 'class', 'srcdoc'] as const;

/**
 * Open elements one parser may hold inside a hidden subtree or <head> before the rest goes to a fresh parser anyway
 * (which then leaves it unclosed): only a hostile page nests that deep there, and it costs at most four times the
 * work per element of MAX_OPEN_ELEMENTS.
 */
export const MAX_OPEN_ELEMENTS_HIDDEN = 4 * MAX_OPEN_ELEMENTS;

/** An open element during the parse. */
interface Frame {
  /** Below an element whose subtree is skipped (INVISIBLE): nothing here is visited. */
  skipped: boolean;
  /** A visited INVISIBLE element: its subtree is skipped. */
  invisible: boolean;
  block: boolean;
  head: boolean;
  /** id of a mount-point candidate, and the visible non-blank count when it opened. */
  mountId: string | null;
  nonBlankAtEntry: number;
}
const SKIPPED: Frame = { skipped: true, invisible: false, block: false, head: false, mountId: null, nonBlankAtEntry: 0 };
const INVISIBLE_FRAME: Frame = { skipped: false, invisible: true, block: false, head: false, mountId: null, nonBlankAtEntry: 0 };
/**
 * The frames of elements that are no mount candidate, by [block][head]: shared, as nothing in them is per element. A
 * hostile page holds 200,000 elements open at once (unclosed `<div>`s or `<a>`s), and a frame object each was ~15 MB.
 */
const PLAIN: Frame = { skipped: false, invisible: false, block: false, head: false, mountId: null, nonBlankAtEntry: 0 };
const PLAIN_BLOCK: Frame = { skipped: false, invisible: false, block: true, head: false, mountId: null, nonBlankAtEntry: 0 };
const PLAIN_HEAD: Frame = { skipped: false, invisible: false, block: false, head: true, mountId: null, nonBlankAtEntry: 0 };
const PLAIN_BLOCK_HEAD: Frame = { skipped: false, invisible: false, block: true, head: true, mountId: null, nonBlankAtEntry: 0 };

/**
 * Parse once and measure everything the validators need, in one pass over htmlparser2's events (no DOM is built):
 * htmlparser2 rather than parse5 because it is about three times faster on large pages, and we only need text and
 * attributes, not spec-exact tree repair. The measures are those of a pre-order walk of the document cheerio (on
 * htmlparser2) would build: the parser's open/close events are that tree's enter/exit, in document order.
 * `publicParserOnly` takes the path that uses htmlparser2's public API alone (the decoding tokenizer): the same
 * results, about 1.4× the CPU on articles; it is also what runs when TOKENIZER_INTERNALS_MATCH is false.
 */
export function extractPageFeatures(html: string, options: { publicParserOnly?: boolean; srcdocDepth?: number } = {}): PageFeatures {
  const srcdocDepth = options.srcdocDepth ?? 0;
  const fast = TOKENIZER_INTERNALS_MATCH && options.publicParserOnly !== true;
  const htmlLower = html.toLowerCase();
  let title = '';
  let noscript = '';
  let scriptCount = 0;
  let bodyElementCount = 0;
  let linkCount = 0;
  let dataFieldCount = 0;
  /**
   * Visible non-blank characters, counted only as far as a mount candidate needs: while one is open and holds at
   * most MAX_PLACEHOLDER_CHARS. Once the innermost open candidate holds more, so do all that enclose it, and the
   * count may lag behind the text (it never decreases, so their verdicts stay the same).
   */
  let nonBlank = 0;
  /** nonBlank when each open mount candidate opened, innermost last. */
  const mountEntries: number[] = [];
  const parts: string[] = [];
  const emptyMountIds: string[] = [];
  const stack: Frame[] = [];
  /** Names of the open elements, innermost last. */
  const names: string[] = [];
  /** Open elements below which nothing is visited (the skipped element itself included). */
  let skipDepth = 0;
  /** Open <head> elements that were visited: their text (metadata) is not content. */
  let headDepth = 0;
  /** All text below the visited <title> or <noscript> now open, whatever is nested in it. */
  let capture: 'title' | 'noscript' | null = null;
  let captured = '';
  /**
   * htmlparser2 unshifts every open element into an array, a cost of the depth: 180,000 unclosed <div>s held the
   * event loop for minutes. Once a parser holds MAX_OPEN_ELEMENTS, the rest of the document goes to a fresh one
   * (Chromium does not nest deeper either) and the walk's own state (hidden subtree, head, captured title, mount
   * candidates) carries on: it is kept here, not in the parser. The fresh parser does not match the end tag of an
   * element an earlier one opened: that element stays open to the end of the document. So a parse is not handed over
   * inside a hidden subtree or <head> (whose end tag decides what text is visible) until MAX_OPEN_ELEMENTS_HIDDEN.
   */
  let parser!: Parser;
  /** The running parser's open elements, so that an end tag closing none of them is not searched for (see there). */
  let openElements!: OpenElements;
  /** Where the running parser's input starts in `html`. */
  let offset = 0;
  /** Open elements the running parser holds. */
  let depth = 0;
  /** Where in `html` the next parser starts, once the running one is full; -1 while it is not. */
  let restartAt = -1;
  /** Enters an element in the walk's own state (the parser's open elements are not it: see restarts below). */
  function openElement(name: string, rawAttribs: Record<string, string>): void {
    names.push(name);
    if (skipDepth > 0) {
      skipDepth += 1;
      stack.push(SKIPPED);
      return;
    }
    const attribs = fast && READ_ATTRIBUTES.some((a) => rawAttribs[a]?.includes('&')) ? decodedAttribs(html.slice(offset + parser.startIndex, offset + parser.endIndex + 1)) : rawAttribs;
    const hidden = headDepth > 0;
    if (name === 'script') scriptCount += 1;
    else if (name === 'title' && title === '') {
      capture = 'title';
      captured = '';
    } else if (name === 'noscript') {
      capture = 'noscript';
      captured = '';
    } else if (name === 'a' && attribs.href !== undefined) linkCount += 1;
    if (!NON_CONTENT_TAGS.has(name) && !hidden) bodyElementCount += 1;
    if (!hidden && isDataField(name, attribs)) dataFieldCount += 1;
    if (name === 'iframe' && !hidden && attribs.srcdoc !== undefined && srcdocDepth < MAX_SRCDOC_DEPTH) {
      // The document of an <iframe srcdoc> is shown in place, as part of this page (an embedded article, a
      // newsletter's body): its text is this page's text; an iframe that loads a URL is another page.
      const inner = extractPageFeatures(attribs.srcdoc, { ...options, srcdocDepth: srcdocDepth + 1 }).visibleText;
      parts.push(` ${inner} `);
      if (mountEntries.length > 0) {
        const limit = (mountEntries[mountEntries.length - 1] as number) + MAX_PLACEHOLDER_CHARS;
        if (nonBlank <= limit) nonBlank += countNonBlank(inner, limit + 1 - nonBlank);
      }
    }
    if (INVISIBLE.has(name)) {
      skipDepth = 1;
      stack.push(INVISIBLE_FRAME);
      return;
    }
    const block = BLOCK_TAGS.has(name);
    if (block) parts.push(' ');
    const id = attribs.id;
    const head = name === 'head';
    if (head) headDepth += 1;
    const mountId = id && !hidden ? id : null;
    if (mountId !== null) mountEntries.push(nonBlank);
    stack.push(mountId === null ? (block ? (head ? PLAIN_BLOCK_HEAD : PLAIN_BLOCK) : head ? PLAIN_HEAD : PLAIN) : { skipped: false, invisible: false, block, head, mountId, nonBlankAtEntry: nonBlank });
  }
  const handler: Partial<Handler> = {
    onopentag(name, rawAttribs) {
      openElements.opened(name);
      depth += 1;
      openElement(name, rawAttribs);
      if (restartAt === -1 && depth >= MAX_OPEN_ELEMENTS && !RAW_TEXT_ELEMENTS.has(name) && ((skipDepth === 0 && headDepth === 0) || depth >= MAX_OPEN_ELEMENTS_HIDDEN)) {
        // The parser stops after this tag: its end() reads no further and closes nothing.
        restartAt = offset + parser.endIndex + 1;
        parser.pause();
      }
    },
    onclosetag(name) {
      openElements.closed(name);
      depth -= 1;
      names.pop();
      // At the end of a body cut inside a start tag, the parser closes that tag although it never opened it.
      const f = stack.pop();
      if (f === undefined) return;
      if (f.skipped) {
        skipDepth -= 1;
        return;
      }
      if (f.invisible) {
        skipDepth = 0;
        if (capture === 'title') title = collapseWhitespace(captured);
        else if (capture === 'noscript') noscript += ` ${captured}`;
        capture = null;
        return;
      }
      // "Loading…" placeholders count as empty: the framework replaces them.
      if (f.mountId !== null) {
        mountEntries.pop();
        if (nonBlank - f.nonBlankAtEntry <= MAX_PLACEHOLDER_CHARS && emptyMountIds.length < MAX_MOUNT_CANDIDATES) emptyMountIds.push(f.mountId);
      }
      if (f.block) parts.push(' ');
      if (f.head) headDepth -= 1;
    },
    ontext(rawData) {
      if (capture === null && (skipDepth > 0 || headDepth > 0)) return;
      const t = internalsOf(parser);
      const data = fast ? decodeText(rawData, t.isSpecial ? (names[names.length - 1] === 'title' ? 'title' : 'raw') : t.state === textState ? 'text' : 'raw') : rawData;
      if (capture !== null) captured += data;
      if (skipDepth > 0 || headDepth > 0) return;
      parts.push(data);
      if (mountEntries.length > 0) {
        const limit = (mountEntries[mountEntries.length - 1] as number) + MAX_PLACEHOLDER_CHARS;
        if (nonBlank <= limit) nonBlank += countNonBlank(data, limit + 1 - nonBlank);
      }
    },
  };
  let textState = -1;
  for (;;) {
    const input = offset === 0 ? html : html.slice(offset);
    parser = new Parser(handler, { xmlMode: false, decodeEntities: !fast });
    openElements = new OpenElements(true);
    openElements.install(parser, input, handler);
    if (fast) {
      // A new tokenizer is in its text state.
      textState = internalsOf(parser).state;
      internalsOf(parser).fastForwardTo = fastForwardTo;
    }
    parser.end(input);
    if (restartAt === -1 || restartAt >= html.length) break;
    offset = restartAt;
    depth = 0;
    restartAt = -1;
  }
  // What earlier parsers left open closes at the end of the document, as the last parser closes its own.
  while (stack.length > 0) handler.onclosetag?.('', true);
  const scriptBytes = scriptByteCount(htmlLower);
  return {
    html,
    htmlLower,
    markupLower: stripQuotedMarkup(htmlLower),
    title,
    visibleText: collapseWhitespace(parts.join('')),
    noscriptText: collapseWhitespace(noscript),
    scriptRatio: html.length > 0 ? Math.min(1, scriptBytes / html.length) : 0,
    scriptCount,
    bodyElementCount,
    linkCount,
    emptyMountIds,
    dataFieldCount,
  };
}

/**
 * Spans of `<tag …>…</tag>` in lower-cased HTML, found with indexOf so the cost stays linear even with thousands
 * of unclosed tags (a lazy regex with a back-reference would go quadratic). An unclosed tag runs to the end.
 */
function elementSpans(lower: string, tags: readonly string[]): [number, number][] {
  const spans: [number, number][] = [];
  // Where each tag next opens at or after `pos` (-1: nowhere), searched again only once `pos` has passed it.
  const next = tags.map(() => -2);
  let pos = 0;
  for (;;) {
    let start = -1;
    let tag = '';
    for (let k = 0; k < tags.length; k++) {
      const t = tags[k] as string;
      let i = next[k] as number;
      if (i === -2 || (i !== -1 && i < pos)) {
        i = indexOfShort(lower, `<${t}`, pos);
        // "<pre" must not match "<prefix-element": the next character ends the tag name.
        while (i !== -1 && isTagNameChar(lower.charCodeAt(i + t.length + 1))) i = indexOfShort(lower, `<${t}`, i + 1);
        next[k] = i;
      }
      if (i !== -1 && (start === -1 || i < start)) {
        start = i;
        tag = t;
      }
    }
    if (start === -1) return spans;
    const close = indexOfShort(lower, `</${tag}`, start);
    const end = close === -1 ? lower.length : (lower.indexOf('>', close) + 1 || lower.length);
    spans.push([start, end]);
    pos = end;
  }
}

/** [a-z0-9-]: a character that continues a lower-cased tag name. */
function isTagNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45;
}

/**
 * `s.indexOf(needle, from)`, searching for at most the first 6 characters and checking the rest: V8 searches short
 * needles with memchr on their first character, and longer ones ("<script", "</textarea") several times slower.
 */
function indexOfShort(s: string, needle: string, from: number): number {
  if (needle.length <= 6) return s.indexOf(needle, from);
  const head = needle.slice(0, 6);
  for (let i = s.indexOf(head, from); i !== -1; i = s.indexOf(head, i + 1)) if (s.startsWith(needle, i)) return i;
  return -1;
}

/** Lower-cased HTML without what is inside <pre>, <code> and <textarea>: quoted examples, not live markup. */
function stripQuotedMarkup(lower: string): string {
  const spans = elementSpans(lower, ['pre', 'code', 'textarea']);
  if (spans.length === 0) return lower;
  let out = '';
  let pos = 0;
  for (const [s, e] of spans) {
    out += lower.slice(pos, s);
    pos = e;
  }
  return out + lower.slice(pos);
}

/** Characters inside <script>…</script> (tags included), by a linear scan: cheerio would re-serialise each one. */
function scriptByteCount(lower: string): number {
  return elementSpans(lower, ['script']).reduce((sum, [s, e]) => sum + (e - s), 0);
}
