import { RAW_TEXT_ELEMENTS, createHtmlParser } from './html-events.js';

/** Elements with no content and no end tag: their close event writes nothing. */
const VOID_ELEMENTS = new Set(['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

/**
 * Depth past which {@link limitHtmlNesting} flattens a document. DOM libraries walk trees recursively: linkedom and
 * Readability took 23 s on a 0.3 MB page nested 10,000 deep, then overflowed the stack; no page meant for reading
 * nests anywhere near this deep.
 */
export const MAX_READABLE_DEPTH = 256;

/**
 * `html` unchanged when no element in it is nested deeper than `maxDepth`; otherwise the same markup with the start
 * and end tags of the elements below that depth left out, so their content flows into the element at that depth (as
 * a browser attaches elements past its own depth limit). Text and attribute values are written as they came; the
 * text of a left-out raw-text element (a script, a style) is left out with it; comments are dropped.
 */
export function limitHtmlNesting(html: string, maxDepth = MAX_READABLE_DEPTH): string {
  let depth = 0;
  let deepest = 0;
  createHtmlParser({
    onopentag() {
      depth += 1;
      if (depth > deepest) deepest = depth;
    },
    onclosetag() {
      depth -= 1;
    },
  }).end(html);
  if (deepest <= maxDepth) return html;

  const out: string[] = [];
  /** For each open element (innermost last): whether its tags were written. */
  const written: boolean[] = [];
  let writtenDepth = 0;
  /** Open left-out raw-text elements: their text is not the page's. */
  let droppedRawText = 0;
  createHtmlParser({
    onopentag(name, attribs) {
      const write = writtenDepth < maxDepth;
      written.push(write);
      if (write) {
        writtenDepth += 1;
        let tag = `<${name}`;
        for (const [k, v] of Object.entries(attribs)) tag += ` ${k}="${v.replace(/"/g, '&quot;')}"`;
        out.push(`${tag}>`);
      } else if (RAW_TEXT_ELEMENTS.has(name)) droppedRawText += 1;
    },
    onclosetag(name) {
      // An element a previous parser of createHtmlParser opened (past its own depth limit) is never closed here.
      const write = written.pop();
      if (write === undefined) return;
      if (write) {
        writtenDepth -= 1;
        if (!VOID_ELEMENTS.has(name)) out.push(`</${name}>`);
      } else if (RAW_TEXT_ELEMENTS.has(name)) droppedRawText -= 1;
    },
    ontext(text) {
      if (droppedRawText === 0) out.push(text);
    },
  }).end(html);
  return out.join('');
}
