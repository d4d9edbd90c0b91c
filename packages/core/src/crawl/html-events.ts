import { Parser, type Handler } from 'htmlparser2';
import { decodeHTMLAttribute, decodeXML } from 'entities';

/**
 * The callbacks of htmlparser2's Parser used here. The parser and the entity decoders are the same modules as
 * validation's page features: one copy loaded, not a second one from cheerio's own dependencies.
 */
export interface ParserHandler {
  onopentag?(name: string, attribs: Record<string, string>): void;
  onclosetag?(name: string): void;
  ontext?(data: string): void;
  oncdatastart?(): void;
  oncdataend?(): void;
}

export interface ParserInstance {
  end(data: string): void;
}

/**
 * Open elements one htmlparser2 parser holds at most. It keeps them in an array it `unshift`s into, so each element
 * opened costs the depth: 180,000 unclosed `<div>`s (9 MB) took two minutes of the event loop in extractLinks. At
 * this depth the rest of the document goes to a fresh parser, which reads it as the flat markup a browser makes of
 * it past its own depth limit (Chromium's, the same 512): every link and text is still read, none of the elements above is
 * closed by it.
 */
export const MAX_OPEN_ELEMENTS = 512;

/**
 * HTML elements whose content htmlparser2's tokenizer reads as text up to their end tag: a parse is never handed to a
 * fresh parser right after one of them opens, as a fresh tokenizer would read that content (a script's
 * `document.write('<a href…>')`) as markup.
 */
export const RAW_TEXT_ELEMENTS: ReadonlySet<string> = new Set(['script', 'style', 'title', 'textarea', 'xmp']);

/** Elements htmlparser2 keeps a foreign-content entry for while open; each end tag with their name drops one. */
const FOREIGN_CONTEXT_ELEMENTS = new Set(['math', 'svg', 'mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title']);

/**
 * Which element names one htmlparser2 Parser holds open, so that an end tag matching none of them skips the parser's
 * search of its open elements: htmlparser2 looks every end tag up in that array, a cost of the depth, and a page of
 * 2 million stray `</x>` at depth 512 took about 5 s. Installed on the parser's `onclosetag(start, endIndex)` (the
 * tokenizer's callback, public in htmlparser2's types); the handler reports the parser's open and close events.
 * Such an end tag then has exactly htmlparser2's effect: none, except `</p>`, which opens and closes an implied `<p>`
 * (emitted here, without the parser's unshift into its open elements), and `</br>`, a `<br>` (left to the parser).
 */
export class OpenElements {
  private readonly counts = new Map<string, number>();
  /** Foreign-content entries the parser holds above its initial one (while there are, an end tag must reach it). */
  private foreignEntries = 0;

  constructor(private readonly html: boolean) {}

  /** The parser emitted an open tag. */
  opened(name: string): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    if (this.html && FOREIGN_CONTEXT_ELEMENTS.has(name)) this.foreignEntries += 1;
  }

  /** The parser emitted a close tag. */
  closed(name: string): void {
    const n = this.counts.get(name);
    if (n !== undefined) this.counts.set(name, n - 1);
  }

  /** Routes the end tags of `parser` (reading `input`, its whole text) through this, calling `cbs` as it would. */
  install(parser: Parser, input: string, cbs: Partial<Handler>): void {
    const parserEndTag = parser.onclosetag.bind(parser);
    parser.onclosetag = (start: number, endIndex: number): void => {
      const raw = input.slice(start, endIndex);
      const name = this.html ? raw.toLowerCase() : raw;
      // Such an end tag drops the parser's innermost foreign-content entry, matched or not; dropping the initial one
      // changes nothing (it says "HTML", as an empty list does).
      const dropsEntry = this.html && FOREIGN_CONTEXT_ELEMENTS.has(name) && this.foreignEntries > 0;
      if (dropsEntry) this.foreignEntries -= 1;
      if (dropsEntry || (this.counts.get(name) ?? 0) > 0 || (this.html && name === 'br')) {
        parserEndTag(start, endIndex);
        return;
      }
      parser.endIndex = endIndex;
      if (this.html && name === 'p') {
        cbs.onopentagname?.('p');
        cbs.onopentag?.('p', {}, true);
        cbs.onclosetag?.('p', false);
      }
      parser.startIndex = endIndex + 1;
    };
  }
}

/**
 * A streaming htmlparser2 parser with entity decoding off: the tokenizer then skips text to the next `<` instead of
 * stepping through it for `&`, and callers decode only the few attribute values they keep ({@link decodeAttribute}).
 * Nesting past {@link MAX_OPEN_ELEMENTS} is flattened (see there).
 */
export function createHtmlParser(handler: ParserHandler, opts: { xml?: boolean } = {}): ParserInstance {
  const options = { xmlMode: opts.xml ?? false, decodeEntities: false, recognizeSelfClosing: opts.xml ?? false };
  return {
    end(data) {
      let rest = data;
      for (;;) {
        let depth = 0;
        let restartAt = -1;
        const openElements = new OpenElements(!options.xmlMode);
        const cbs: Partial<Handler> = {
          ...handler,
          onopentag(name, attribs) {
            openElements.opened(name);
            handler.onopentag?.(name, attribs);
            depth += 1;
            if (depth >= MAX_OPEN_ELEMENTS && restartAt === -1 && (options.xmlMode || !RAW_TEXT_ELEMENTS.has(name))) {
              // Stops this parser after the tag: its end() reads no further and closes nothing.
              restartAt = parser.endIndex + 1;
              parser.pause();
            }
          },
          onclosetag(name) {
            openElements.closed(name);
            depth -= 1;
            handler.onclosetag?.(name);
          },
        };
        const parser: Parser = new Parser(cbs, options);
        openElements.install(parser, rest, cbs);
        parser.end(rest);
        if (restartAt === -1 || restartAt >= rest.length) return;
        rest = rest.slice(restartAt);
      }
    },
  };
}

/** An attribute value as the decoding tokenizer would give it (HTML attribute rules: `&amp` before `=` stays). */
export function decodeAttribute(raw: string): string {
  return raw.includes('&') ? decodeHTMLAttribute(raw) : raw;
}

/** XML text with its entities and character references decoded. */
export function decodeXmlText(raw: string): string {
  return raw.includes('&') ? decodeXML(raw) : raw;
}
