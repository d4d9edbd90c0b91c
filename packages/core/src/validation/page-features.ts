import * as cheerio from 'cheerio';

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
  /** Visible body text, whitespace collapsed (script, style, template, noscript, svg removed). */
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
const INVISIBLE = new Set(['script', 'style', 'template', 'noscript', 'svg', 'iframe', 'object', 'title']);
/** Elements that are not page content when counting structure. */
const NON_CONTENT_TAGS = new Set(['html', 'head', 'body', 'title', 'script', 'style', 'link', 'meta', 'noscript', 'template', 'base']);
/** Elements after which text flows to a new line: a space keeps their words apart in the collapsed text. */
const BLOCK_TAGS = new Set(['p', 'div', 'br', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'tr', 'td', 'th', 'section', 'article', 'header', 'footer', 'nav', 'main', 'aside', 'ul', 'ol', 'table', 'form', 'blockquote', 'pre', 'hr', 'dd', 'dt', 'dl', 'figure', 'figcaption', 'address', 'button', 'label', 'option']);
/** Input types that carry no user data: a form made only of these is a challenge or a button, not a login/contact form. */
const NON_DATA_INPUT_TYPES = new Set(['hidden', 'submit', 'button', 'image', 'reset', 'checkbox', 'radio', 'file', 'range', 'color']);
/** A field whose id/name/class says it holds the answer to a captcha (Amazon's and shared hosts' text captchas). */
const CAPTCHA_FIELD = /captcha|challenge/i;

/** Whether an element is a field a person fills in with their own data. */
function isDataField(name: string, attribs: Record<string, string> | undefined): boolean {
  if (name !== 'input' && name !== 'textarea' && name !== 'select') return false;
  const a = attribs ?? {};
  if (name === 'input' && NON_DATA_INPUT_TYPES.has((a.type ?? 'text').trim().toLowerCase())) return false;
  return !CAPTCHA_FIELD.test(`${a.id ?? ''} ${a.name ?? ''} ${a.class ?? ''}`);
}

/** Text a mount point may hold and still be a placeholder ("Loading…", "Please wait"), in non-blank characters. */
const MAX_PLACEHOLDER_CHARS = 40;
/** Ids collected as mount candidates; shells have a handful, and a huge page must not cost more. */
const MAX_MOUNT_CANDIDATES = 200;

/** The parts of a domhandler node we read (cheerio's parser output), typed locally to avoid a direct dependency. */
interface DomNode {
  type: string;
  name?: string;
  attribs?: Record<string, string>;
  data?: string;
  children?: DomNode[];
}

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

/** Characters that are not whitespace (ASCII whitespace and NBSP), counted without allocating. */
function countNonBlank(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 32 && c !== 160) n += 1;
  }
  return n;
}

const isElement = (n: DomNode): boolean => n.type === 'tag' || n.type === 'script' || n.type === 'style';

/** All text below a node, iteratively (deeply nested markup must not overflow the stack). */
function textBelow(node: DomNode): string {
  const out: string[] = [];
  const stack: DomNode[] = [...(node.children ?? [])].reverse();
  while (stack.length > 0) {
    const n = stack.pop() as DomNode;
    if (n.type === 'text') out.push(n.data ?? '');
    else if (n.children) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as DomNode);
  }
  return out.join('');
}

/**
 * Parse once and measure everything the validators need, in one iterative walk. htmlparser2 (through cheerio)
 * rather than parse5: about three times faster on large pages, and we only need text and attributes, not
 * spec-exact tree repair.
 */
export function extractPageFeatures(html: string): PageFeatures {
  const $ = cheerio.load(html, { xml: { xmlMode: false, decodeEntities: true } });
  const htmlLower = html.toLowerCase();
  const root = $.root()[0] as unknown as DomNode;
  let title = '';
  let noscript = '';
  let scriptCount = 0;
  let bodyElementCount = 0;
  let linkCount = 0;
  let dataFieldCount = 0;
  let nonBlank = 0;
  const parts: string[] = [];
  const emptyMountIds: string[] = [];
  // `hidden`: inside <head>, whose text (metadata) is not content but whose scripts and title still count.
  type Frame = { node: DomNode; hidden: boolean; exitOf?: { id: string; nonBlankAtEntry: number }; spaceAfter?: boolean };
  const stack: Frame[] = [{ node: root, hidden: false }];
  while (stack.length > 0) {
    const { node, hidden, exitOf, spaceAfter } = stack.pop() as Frame;
    if (spaceAfter) {
      parts.push(' ');
      continue;
    }
    if (exitOf) {
      // "Loading…" placeholders count as empty: the framework replaces them.
      if (nonBlank - exitOf.nonBlankAtEntry <= MAX_PLACEHOLDER_CHARS && emptyMountIds.length < MAX_MOUNT_CANDIDATES) emptyMountIds.push(exitOf.id);
      continue;
    }
    if (node.type === 'text') {
      if (hidden) continue;
      const data = node.data ?? '';
      parts.push(data);
      nonBlank += countNonBlank(data);
      continue;
    }
    if (isElement(node)) {
      const name = (node.name ?? '').toLowerCase();
      if (name === 'script') scriptCount += 1;
      else if (name === 'title' && title === '') title = collapseWhitespace(textBelow(node));
      else if (name === 'noscript') noscript += ` ${textBelow(node)}`;
      else if (name === 'a' && node.attribs?.href !== undefined) linkCount += 1;
      if (!NON_CONTENT_TAGS.has(name) && !hidden) bodyElementCount += 1;
      if (!hidden && isDataField(name, node.attribs)) dataFieldCount += 1;
      if (INVISIBLE.has(name)) continue;
      if (BLOCK_TAGS.has(name)) {
        parts.push(' ');
        stack.push({ node, hidden, spaceAfter: true });
      }
      const id = node.attribs?.id;
      if (id && !hidden) stack.push({ node, hidden, exitOf: { id, nonBlankAtEntry: nonBlank } });
    }
    const childHidden = hidden || (isElement(node) && node.name?.toLowerCase() === 'head');
    const children = node.children ?? [];
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i] as DomNode, hidden: childHidden });
  }
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
  let pos = 0;
  for (;;) {
    let start = -1;
    let tag = '';
    for (const t of tags) {
      let i = lower.indexOf(`<${t}`, pos);
      // "<pre" must not match "<prefix-element": the next character ends the tag name.
      while (i !== -1 && /[a-z0-9-]/.test(lower.charAt(i + t.length + 1))) i = lower.indexOf(`<${t}`, i + 1);
      if (i !== -1 && (start === -1 || i < start)) {
        start = i;
        tag = t;
      }
    }
    if (start === -1) return spans;
    const close = lower.indexOf(`</${tag}`, start);
    const end = close === -1 ? lower.length : (lower.indexOf('>', close) + 1 || lower.length);
    spans.push([start, end]);
    pos = end;
  }
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
