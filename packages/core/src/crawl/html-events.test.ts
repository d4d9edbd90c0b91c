import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { createHtmlParser } from './html-events.js';

/** Every open, close and text event, as one list. */
function eventsOf(parse: (handler: Parameters<typeof createHtmlParser>[0]) => void): string[] {
  const out: string[] = [];
  parse({
    onopentag: (name, attribs) => void out.push(`<${name} ${JSON.stringify(attribs)}>`),
    onclosetag: (name) => void out.push(`</${name}>`),
    ontext: (text) => void out.push(text),
  });
  return out;
}

const STRAY_END_TAGS = [
  // Unmatched end tags of every kind htmlparser2 treats apart: </p> opens and closes a <p>, </br> is a <br>, void and
  // unknown names do nothing, foreign-content names (svg, math, mi, title…) drop the innermost foreign entry even
  // unmatched, which decides whether <x/> self-closes.
  '<div><p>a</x></p></p><span></br></img>b</span></div>',
  '<svg><g></svg><path/><rect/></svg><circle/><p>x</p>',
  '<svg><desc>d</desc></mi><path/></svg><path/>t</svg><path/>u',
  '<math><mi></mi></math></math></title><svg><rect/></svg><p></P></SVG></Br><b/>v',
  '<title>t</title></title></title><svg></title><path/>w',
  '<table><tr><td>1</td></tr></table></td></tr></table></x></y>',
];

const HERE = dirname(fileURLToPath(import.meta.url));
const CORPUS = readdirSync(join(HERE, '../validation/__fixtures__'))
  .filter((f) => f.endsWith('.html'))
  .map((f) => readFileSync(join(HERE, '../validation/__fixtures__', f), 'utf8'));

describe('createHtmlParser', () => {
  it("gives htmlparser2's own events on stray end tags and on the validation corpus", () => {
    expect(CORPUS.length).toBeGreaterThan(100);
    for (const xml of [false, true]) {
      for (const html of [...STRAY_END_TAGS, ...CORPUS]) {
        const options = { xmlMode: xml, decodeEntities: false, recognizeSelfClosing: xml };
        const expected = eventsOf((handler) => new Parser(handler, options).end(html));
        expect(eventsOf((handler) => createHtmlParser(handler, { xml }).end(html))).toEqual(expected);
      }
    }
  });
});
