import * as cheerio from 'cheerio';
import {
  BLOCK_TAGS,
  INVISIBLE,
  MAX_MOUNT_CANDIDATES,
  MAX_PLACEHOLDER_CHARS,
  MAX_SRCDOC_DEPTH,
  NON_CONTENT_TAGS,
  collapseWhitespace,
  isDataField,
  type PageFeatures,
} from '../page-features.js';

/**
 * The plain reference for extractPageFeatures: the same measures taken by a pre-order walk over the DOM cheerio builds
 * through its public API (htmlparser2, entities decoded), with the obvious linear scans for the quoted-markup and
 * script spans. Slow and simple on purpose: the fast event walk must give exactly this on every page.
 */
export function referencePageFeatures(html: string, srcdocDepth = 0): PageFeatures {
  const $ = cheerio.load(html, { xml: { xmlMode: false, decodeEntities: true } });
  const htmlLower = html.toLowerCase();
  let title = '';
  let noscript = '';
  let scriptCount = 0;
  let bodyElementCount = 0;
  let linkCount = 0;
  let dataFieldCount = 0;
  let nonBlank = 0;
  const parts: string[] = [];
  const emptyMountIds: string[] = [];
  type Node = { type: string; name?: string; attribs?: Record<string, string>; data?: string; children?: Node[] };
  type Frame = { node: Node; hidden: boolean; exitOf?: { id: string; nonBlankAtEntry: number }; spaceAfter?: boolean };
  const isElement = (n: Node) => n.type === 'tag' || n.type === 'script' || n.type === 'style';
  const textBelow = (n: Node): string => (n.type === 'text' ? (n.data ?? '') : (n.children ?? []).map(textBelow).join(''));
  const stack: Frame[] = [{ node: $.root()[0] as unknown as Node, hidden: false }];
  while (stack.length > 0) {
    const { node, hidden, exitOf, spaceAfter } = stack.pop() as Frame;
    if (spaceAfter) {
      parts.push(' ');
      continue;
    }
    if (exitOf) {
      if (nonBlank - exitOf.nonBlankAtEntry <= MAX_PLACEHOLDER_CHARS && emptyMountIds.length < MAX_MOUNT_CANDIDATES) emptyMountIds.push(exitOf.id);
      continue;
    }
    if (node.type === 'text') {
      if (hidden) continue;
      parts.push(node.data ?? '');
      // Non-blank: above ASCII space, and not NBSP.
      for (const ch of node.data ?? '') if (ch.charCodeAt(0) > 32 && ch.charCodeAt(0) !== 160) nonBlank += 1;
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
      const srcdoc = node.attribs?.srcdoc;
      if (name === 'iframe' && !hidden && srcdoc !== undefined && srcdocDepth < MAX_SRCDOC_DEPTH) {
        const inner = referencePageFeatures(srcdoc, srcdocDepth + 1).visibleText;
        parts.push(` ${inner} `);
        for (const ch of inner) if (ch.charCodeAt(0) > 32 && ch.charCodeAt(0) !== 160) nonBlank += 1;
      }
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
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i] as Node, hidden: childHidden });
  }
  return {
    html,
    htmlLower,
    markupLower: withoutSpans(htmlLower, spans(htmlLower, ['pre', 'code', 'textarea'])),
    title,
    visibleText: collapseWhitespace(parts.join('')),
    noscriptText: collapseWhitespace(noscript),
    scriptRatio: html.length > 0 ? Math.min(1, spans(htmlLower, ['script']).reduce((n, [s, e]) => n + e - s, 0) / html.length) : 0,
    scriptCount,
    bodyElementCount,
    linkCount,
    emptyMountIds,
    dataFieldCount,
  };
}

/** `<tag …>…</tag>` spans, earliest first; an unclosed one runs to the end; `<pre` does not match `<prefix-x`. */
function spans(lower: string, tags: readonly string[]): [number, number][] {
  const out: [number, number][] = [];
  for (let pos = 0; ; ) {
    const found = tags
      .map((t) => {
        const m = new RegExp(`<${t}(?![a-z0-9-])`, 'g');
        m.lastIndex = pos;
        return { t, i: m.exec(lower)?.index ?? -1 };
      })
      .filter((f) => f.i !== -1)
      .sort((a, b) => a.i - b.i)[0];
    if (!found) return out;
    const close = lower.indexOf(`</${found.t}`, found.i);
    const end = close === -1 ? lower.length : lower.indexOf('>', close) + 1 || lower.length;
    out.push([found.i, end]);
    pos = end;
  }
}

function withoutSpans(s: string, cut: [number, number][]): string {
  let out = '';
  let pos = 0;
  for (const [a, b] of cut) {
    out += s.slice(pos, a);
    pos = b;
  }
  return out + s.slice(pos);
}
