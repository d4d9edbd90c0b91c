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
  reset(): void;
}

/**
 * A streaming htmlparser2 parser with entity decoding off: the tokenizer then skips text to the next `<` instead of
 * stepping through it for `&`, and callers decode only the few attribute values they keep ({@link decodeAttribute}).
 */
export function createHtmlParser(handler: ParserHandler, opts: { xml?: boolean } = {}): ParserInstance {
  return new Parser(handler, { xmlMode: opts.xml ?? false, decodeEntities: false, recognizeSelfClosing: opts.xml ?? false });
}

/** An attribute value as the decoding tokenizer would give it (HTML attribute rules: `&amp` before `=` stays). */
export function decodeAttribute(raw: string): string {
  return raw.includes('&') ? decodeHTMLAttribute(raw) : raw;
}

/** XML text with its entities and character references decoded. */
export function decodeXmlText(raw: string): string {
  return raw.includes('&') ? decodeXML(raw) : raw;
}
