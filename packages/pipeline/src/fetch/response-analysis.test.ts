import { describe, expect, it } from 'vitest';
import { staticArticle } from '@crawler/testkit';
import { analyzeSnapshot } from './response-analysis.js';

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
