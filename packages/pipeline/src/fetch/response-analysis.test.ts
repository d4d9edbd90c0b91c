import { describe, expect, it } from 'vitest';
import { staticArticle } from '@crawler/testkit';
import { MAX_ANALYSED_BYTES } from '@crawler/core';
import { analysedByteCount, analyzeSnapshot } from './response-analysis.js';

const HTML = { 'content-type': 'text/html; charset=utf-8' };
const fingerprint = (body: string | Uint8Array, headers: Record<string, string> = HTML) => analyzeSnapshot({ status: 200, headers, body }).textSha256;

/** The same article, with the markup a server makes new at every response. */
function withTokens(k: number, paragraphs?: string[]): string {
  const head = `<meta name="csrf-token" content="csrf-${k}"><link rel="stylesheet" href="/app.css?v=${k}"><script nonce="n-${k}">var rid = "${k}";</script>`;
  return staticArticle({ title: 'Harbour news', head, ...(paragraphs ? { paragraphs } : {}) })
    .replace('</main>', `</main><form><input type="hidden" name="authenticity_token" value="t-${k}"></form><noscript>req ${k}</noscript>`);
}

describe('the text fingerprint of a response', () => {
  it('ignores tokens, nonces, scripts, attributes and whitespace', () => {
    const a = fingerprint(withTokens(1));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprint(withTokens(2))).toBe(a);
    expect(fingerprint(new TextEncoder().encode(withTokens(3).replace(/<p>/g, '<p>\n   ')))).toBe(a);
  });

  it('follows the text a reader sees, the title included', () => {
    const a = fingerprint(withTokens(1, ['One paragraph.']));
    expect(fingerprint(withTokens(1, ['Another paragraph.']))).not.toBe(a);
    expect(fingerprint(withTokens(1, ['One paragraph.']).replace(/Harbour news/g, 'Harbour notes'))).not.toBe(a);
    // Words run together are other text than words apart.
    expect(fingerprint('<html><body><p>a</p><p>b</p></body></html>')).not.toBe(fingerprint('<html><body><p>ab</p></body></html>'));
  });

  it('is null where there is no page text to compare: non-HTML, and a body longer than the analysis reads', () => {
    expect(fingerprint('{"a":1}', { 'content-type': 'application/json' })).toBeNull();
    expect(fingerprint(new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d]), { 'content-type': 'application/pdf' })).toBeNull();
    const huge = `<html><body>${'<p>words and more words</p>'.repeat(100_000)}</body></html>`;
    expect(fingerprint(huge)).toBeNull();
  });
});

describe('the analysis of a body longer than it reads', () => {
  const page = (text: string) => `<!doctype html><html><head><title>long</title></head><body><p>${text}</p></body></html>`;
  /** The analysis of the bytes with their charset, against that of the whole text decoded beforehand (never cut). */
  const both = (text: string, contentType: string, charset: string, bytes = new TextEncoder().encode(text)) => {
    const headers = { 'content-type': contentType };
    return { cut: analyzeSnapshot({ status: 200, headers, body: bytes, charset }), whole: analyzeSnapshot({ status: 200, headers, body: text }), used: analysedByteCount({ status: 200, headers, body: bytes, charset }), bytes };
  };

  it('reads few enough bytes of a long ASCII page, and gives what the whole text gives', () => {
    const r = both(page('plain words '.repeat(600_000)), 'text/html; charset=utf-8', 'utf-8');
    expect(r.used).toBeLessThan(r.bytes.byteLength);
    expect(r.cut).toEqual(r.whole);
  });

  it('fingerprints a page of three-byte characters whose text fits though its bytes are three times the limit', () => {
    // Just under MAX_ANALYSED_BYTES characters, about 6 MiB of UTF-8: the text is read whole, so it is fingerprinted.
    const r = both(page('漢'.repeat(MAX_ANALYSED_BYTES - 200)), 'text/html; charset=utf-8', 'utf-8');
    expect(r.bytes.byteLength).toBeGreaterThan(3 * MAX_ANALYSED_BYTES - 1000);
    expect(r.whole.textSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.cut).toEqual(r.whole);
    // Past the limit by a few characters: cut, and not fingerprinted, either way.
    const over = both(page('漢'.repeat(MAX_ANALYSED_BYTES + 10)), 'text/html; charset=utf-8', 'utf-8');
    expect(over.used).toBeLessThan(over.bytes.byteLength);
    expect(over.whole.textSha256).toBeNull();
    expect(over.cut).toEqual(over.whole);
  });

  it('reads the whole of a body that is blank as far as the cut, and of a charset whose characters take any bytes', () => {
    const blankFirst = both(`${' '.repeat(7 * 1024 * 1024)}{"a":1}`, 'application/json', 'utf-8');
    expect(blankFirst.used).toBe(blankFirst.bytes.byteLength);
    expect(blankFirst.whole.validation.isEmpty).toBe(false);
    expect(blankFirst.cut).toEqual(blankFirst.whole);
    // No-break spaces are blank to the analysis too, though none of their bytes is an ASCII space.
    const nbspFirst = both(`${'\u00a0'.repeat(3.5 * 1024 * 1024)}{"a":1}`, 'application/json', 'utf-8');
    expect(nbspFirst.used).toBe(nbspFirst.bytes.byteLength);
    expect(nbspFirst.cut).toEqual(nbspFirst.whole);
    const latin = both(page('mots '.repeat(600_000)), 'text/html; charset=windows-1252', 'windows-1252');
    expect(latin.used).toBe(MAX_ANALYSED_BYTES + 4);
    expect(latin.cut).toEqual(latin.whole);
    const jis = both(page('mots '.repeat(600_000)), 'text/html; charset=iso-2022-jp', 'iso-2022-jp');
    expect(jis.used).toBe(jis.bytes.byteLength);
  });
});
