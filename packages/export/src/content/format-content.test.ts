import { describe, expect, it } from 'vitest';
import { ARTICLE_HTML } from '../__fixtures__/article.js';
import { UnsupportedFormatError, blockText, formatAsMarkdown, formatAsText } from './format-content.js';

const page = (html: string | Uint8Array, contentType: string | null = 'text/html; charset=utf-8') => ({
  body: typeof html === 'string' ? new TextEncoder().encode(html) : html,
  contentType,
  finalUrl: 'https://news.example.com/2026/tides',
});

describe('formatAsMarkdown', () => {
  const md = formatAsMarkdown(page(ARTICLE_HTML)).text;

  it('keeps the headings of the article', () => {
    expect(md).toMatch(/^# Tidal power in the Bay of Fundy/m);
    expect(md).toMatch(/^## Why the tides are so high$/m);
    expect(md).toMatch(/^## What the turbines must survive$/m);
    expect(md).toMatch(/^### The cost question$/m);
  });

  it('keeps its links, made absolute', () => {
    expect(md).toContain('[resonance explainer](https://news.example.com/science/resonance)');
    expect(md).toContain('[tide gauge at station 42](https://www.example.org/tides/station-42)');
    expect(md).toMatch(/^-\s+Sealed bearings$/m);
  });

  it('resolves links against the page\'s <base href>, as a browser would, and ignores an unusable one', () => {
    const body = (base: string) =>
      `<html><head><base href="${base}"><title>Based</title></head><body><p>${'Words of the article. '.repeat(20)}<a href="rel1">rel1</a> <a href="/abs">abs</a> <img src="pic.png" alt="pic"></p></body></html>`;
    const based = formatAsMarkdown(page(body('http://cdn.example.net/other/'))).text;
    expect(based).toContain('[rel1](http://cdn.example.net/other/rel1)');
    expect(based).toContain('[abs](http://cdn.example.net/abs)');
    expect(based).toContain('![pic](http://cdn.example.net/other/pic.png)');
    // A relative base resolves against the page; one that is no URL is ignored.
    expect(formatAsMarkdown(page(body('/docs/'))).text).toContain('[rel1](https://news.example.com/docs/rel1)');
    expect(formatAsMarkdown(page(body('http://[bad'))).text).toContain('[rel1](https://news.example.com/2026/rel1)');
  });

  it('drops the navigation, the ads, the scripts and the footer', () => {
    expect(md).not.toContain('Subscribe');
    expect(md).not.toContain('Promo');
    expect(md).not.toContain('tracking');
    expect(md).not.toContain('Privacy');
  });
});

describe('formatAsText', () => {
  it('gives one line per block, without markup', () => {
    const text = formatAsText(page(ARTICLE_HTML)).text;
    expect(text.split('\n')).toContain('Why the tides are so high');
    expect(text).toContain('The resonance explainer goes into the physics.');
    expect(text).not.toMatch(/<|>|\]\(/);
    expect(text).not.toContain('Subscribe');
  });

  it('decodes a page in a legacy charset', () => {
    // 0x80 is '€' in windows-1252 (not in latin-1): the charset label, not a guess, decides.
    const bytes = Buffer.concat([Buffer.from('<html><body><p>D\xe9j\xe0 vu \xe0 Z\xfcrich, na\xefve caf\xe9 \x80 100</p></body></html>', 'latin1')]);
    expect(formatAsText(page(bytes, 'text/html; charset=windows-1252')).text).toContain('Déjà vu à Zürich, naïve café € 100');
  });

  it('passes plain text through and refuses binary content', () => {
    expect(formatAsText(page('just text\nline two', 'text/plain')).text).toBe('just text\nline two');
    expect(() => formatAsMarkdown(page(new Uint8Array([0x25, 0x50, 0x44, 0x46]), 'application/pdf'))).toThrow(UnsupportedFormatError);
  });

  it('sniffs a page without a Content-Type as the fetcher did: behind a BOM or a leading comment too', () => {
    const html = '<!doctype html><html><head><title>Untyped</title></head><body><p>Plat du jour</p></body></html>';
    expect(formatAsText(page(html, null)).text).toContain('Plat du jour');
    expect(formatAsText(page(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(html)]), null)).text).toContain('Plat du jour');
    expect(formatAsText(page(`<!-- generated -->\n${html}`, null)).text).toContain('Plat du jour');
    expect(() => formatAsText(page(new Uint8Array([0x00, 0x01, 0x02]), null))).toThrow(UnsupportedFormatError);
  });

  it('finds the text of a page with too little prose for Readability', () => {
    const out = formatAsText(page('<html><head><title>Tiny</title></head><body><div>Hello <b>there</b></div></body></html>'));
    expect(out.text).toContain('Hello there');
  });

  it("includes the article an <iframe srcdoc> holds, in place, its links resolved against the page's", () => {
    const paragraphs = Array.from({ length: 6 }, (_, i) => `<p>Sentence ${i} of the embedded report, long enough to be prose that a reader keeps.</p>`).join('');
    const inner = `<html><head><title>inner</title></head><body><h2>Embedded report</h2>${paragraphs}<p><a href="/full">Full report</a></p></body></html>`;
    const html = `<html><head><title>Wrapper</title></head><body><p>Intro line.</p><iframe srcdoc="${inner.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"></iframe></body></html>`;
    const text = formatAsText(page(html)).text;
    expect(text).toContain('Sentence 5 of the embedded report');
    expect(text.split('\n')).toContain('Embedded report');
    expect(formatAsMarkdown(page(html)).text).toContain('[Full report](https://news.example.com/full)');
  });

  it('reads pages that leave out the optional <html>, <head> and <body> tags, or have markup before <html>, as a browser does', () => {
    const prose = 'The article a reader came for, in a sentence long enough to be kept. '.repeat(4);
    const pages = {
      // HTML5 lets every one of these tags be left out; style guides recommend it.
      noTags: `<!doctype html><meta charset=utf-8><title>Bare</title><p>${prose}</p>`,
      noHeadNoBody: `<!doctype html><html lang=en><meta charset=utf-8><title>Bare</title><p>${prose}</p>`,
      noBody: `<!doctype html><html><head><title>Bare</title></head><p>${prose}</p></html>`,
      // A PHP notice printed before the document, as real servers do.
      before: `<p>Notice: Undefined index: q in /var/www/index.php on line 3</p><!doctype html><html><head><title>Bare</title></head><body><p>${prose}</p></body></html>`,
    };
    for (const [name, html] of Object.entries(pages)) {
      expect(formatAsText(page(html)).text, name).toContain('The article a reader came for');
      expect(formatAsMarkdown(page(html)).text, name).toContain('The article a reader came for');
    }
  });

  it('drops the NUL characters a browser drops from a page\'s text', () => {
    const html = `<html><body><p>${'Words of the article. '.repeat(10)}a\u0000b</p></body></html>`;
    expect(formatAsText(page(html)).text).toContain('ab');
    expect(formatAsText(page(html)).text).not.toContain('\u0000');
    expect(formatAsMarkdown(page(html)).text).not.toContain('\u0000');
  });

  it('walks each element\'s children once: a list of 20,000 items is not read 20,000 times over', () => {
    // linkedom builds a new NodeList on every read of childNodes (a walk of the children), so reading it per child
    // was quadratic: 65 s for a body of 20,000 blocks. The fake charges what linkedom pays for each access.
    let cost = 0;
    type Fake = { nodeType: number; nodeName: string; textContent: string | null; firstChild: Fake | null; nextSibling: Fake | null; readonly childNodes: Fake[] };
    const node = (nodeType: number, nodeName: string, textContent: string | null, children: Fake[] = []): Fake => {
      children.forEach((c, i) => (c.nextSibling = children[i + 1] ?? null));
      return {
        nodeType, nodeName, textContent, nextSibling: null,
        get firstChild() { cost += 1; return children[0] ?? null; },
        get childNodes() { cost += children.length + 1; return children; },
      } as Fake;
    };
    const items = Array.from({ length: 20_000 }, (_, i) => node(1, 'LI', null, [node(3, '#text', `item ${i}`)]));
    const text = blockText(node(1, 'UL', null, items));
    expect(text.split('\n')).toHaveLength(20_000);
    expect(text.split('\n')[19_999]).toBe('item 19999');
    expect(cost).toBeLessThan(10 * 20_000);
  });

  it('reads a page nested 12,000 deep: its text and what follows the nesting, without overflowing the stack', () => {
    const html = `<html><head><title>Deep</title></head><body><p>${'An opening sentence a reader keeps. '.repeat(10)}</p>${'<div class="x"><span>t</span>'.repeat(12_000)}<p>The closing words after the nesting.</p></body></html>`;
    // Past MAX_READABLE_DEPTH the elements are flattened into one, which Readability then takes for the article.
    const text = formatAsText(page(html)).text;
    expect(text).toContain('t'.repeat(1_000));
    expect(text).toContain('The closing words after the nesting.');
    expect(formatAsMarkdown(page(html)).text).toContain('The closing words after the nesting.');
  });
});

