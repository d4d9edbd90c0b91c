import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createHtmlParser } from './html-events.js';
import { MAX_READABLE_DEPTH, limitHtmlNesting } from './limit-nesting.js';

/** The deepest element nesting of `html`, as htmlparser2 reads it. */
function depthOf(html: string): number {
  let depth = 0;
  let deepest = 0;
  createHtmlParser({ onopentag: () => void (deepest = Math.max(deepest, ++depth)), onclosetag: () => void depth-- }).end(html);
  return deepest;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const CORPUS = readdirSync(join(HERE, '../validation/__fixtures__'))
  .filter((f) => f.endsWith('.html'))
  .map((f) => readFileSync(join(HERE, '../validation/__fixtures__', f), 'utf8'));

describe('limitHtmlNesting', () => {
  it('returns every page of the validation corpus as it is', () => {
    expect(CORPUS.length).toBeGreaterThan(100);
    for (const html of CORPUS) expect(limitHtmlNesting(html)).toBe(html);
  });

  it('flattens a page nested 5,000 deep to MAX_READABLE_DEPTH, keeping its text and leaving out a left-out script', () => {
    const html = `<html><body><p title="a &quot;q&quot;">Fish &amp; chips</p>${'<div class="x"><span>t</span><br>'.repeat(5_000)}<script>var hidden = 1</script><p>after</p></body></html>`;
    expect(depthOf(html)).toBeGreaterThan(5_000);
    const out = limitHtmlNesting(html);
    expect(depthOf(out)).toBeLessThanOrEqual(MAX_READABLE_DEPTH);
    expect(out.startsWith('<html><body><p title="a &quot;q&quot;">Fish &amp; chips</p><div class="x"><span>t</span><br><div')).toBe(true);
    expect(out.match(/t/g)?.length).toBeGreaterThan(5_000);
    expect(out).toContain('after');
    expect(out).not.toContain('hidden');
  });
});
