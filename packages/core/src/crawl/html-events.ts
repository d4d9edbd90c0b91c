import { createRequire } from 'node:module';

/** The callbacks of htmlparser2's Parser used here, typed locally (the package is cheerio's, not a direct dependency). */
export interface ParserHandler {
  onopentag?(name: string, attribs: Record<string, string>): void;
  onclosetag?(name: string): void;
  ontext?(data: string): void;
}

export interface ParserInstance {
  end(data: string): void;
  reset(): void;
}

type ParserCtor = new (cbs: ParserHandler, options: { xmlMode: boolean; decodeEntities: boolean; recognizeSelfClosing?: boolean }) => ParserInstance;

// The parser cheerio runs (same version as validation's page features), resolved from cheerio's own location.
const requireFromCheerio = createRequire(createRequire(import.meta.url).resolve('cheerio'));
const { Parser } = requireFromCheerio('htmlparser2') as { Parser: ParserCtor };
const entities = createRequire(requireFromCheerio.resolve('htmlparser2'))('entities') as {
  decodeHTMLAttribute(s: string): string;
  decodeXML(s: string): string;
};

/**
 * A streaming htmlparser2 parser with entity decoding off: the tokenizer then skips text to the next `<` instead of
 * stepping through it for `&`, and callers decode only the few attribute values they keep ({@link decodeAttribute}).
 */
export function createHtmlParser(handler: ParserHandler, opts: { xml?: boolean } = {}): ParserInstance {
  return new Parser(handler, { xmlMode: opts.xml ?? false, decodeEntities: false, recognizeSelfClosing: opts.xml ?? false });
}

/** An attribute value as the decoding tokenizer would give it (HTML attribute rules: `&amp` before `=` stays). */
export function decodeAttribute(raw: string): string {
  return raw.includes('&') ? entities.decodeHTMLAttribute(raw) : raw;
}

/** XML text with its entities and character references decoded. */
export function decodeXmlText(raw: string): string {
  return raw.includes('&') ? entities.decodeXML(raw) : raw;
}
