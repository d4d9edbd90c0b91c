import { Parser } from 'htmlparser2';
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
        const parser: Parser = new Parser(
          {
            ...handler,
            onopentag(name, attribs) {
              handler.onopentag?.(name, attribs);
              depth += 1;
              if (depth >= MAX_OPEN_ELEMENTS && restartAt === -1 && (options.xmlMode || !RAW_TEXT_ELEMENTS.has(name))) {
                // Stops this parser after the tag: its end() reads no further and closes nothing.
                restartAt = parser.endIndex + 1;
                parser.pause();
              }
            },
            onclosetag(name) {
              depth -= 1;
              handler.onclosetag?.(name);
            },
          },
          options,
        );
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
