import { describe, expect, it } from 'vitest';
import { ARTICLE_HTML } from '../__fixtures__/article.js';
import { UnsupportedFormatError, formatAsMarkdown, formatAsText } from './format-content.js';
import { INLINE_FORMAT_BYTES, formatPage } from './format-pool.js';

const page = (html: string, contentType: string | null = 'text/html; charset=utf-8') => ({
  body: new TextEncoder().encode(html),
  contentType,
  finalUrl: 'https://news.example.com/2026/tides',
});

/** An article of more than INLINE_FORMAT_BYTES: its paragraphs repeated. */
const LARGE = ARTICLE_HTML.replace('</body>', `${'<p>Another paragraph of the long article, with <a href="/more">a link</a>.</p>'.repeat(6_000)}</body>`);

/** How many turns the event loop made while `work` ran: none when it held the thread throughout. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  const spin = () => {
    if (!running) return;
    turns += 1;
    setImmediate(spin);
  };
  setImmediate(spin);
  const value = await work();
  running = false;
  return { value, turns };
}

describe('formatPage', () => {
  it('converts a large page on a thread of its own, to the same text and Markdown as on the caller\'s', async () => {
    expect(new TextEncoder().encode(LARGE).byteLength).toBeGreaterThan(INLINE_FORMAT_BYTES);
    const text = await turnsDuring(() => formatPage('text', page(LARGE)));
    // The caller's event loop kept turning: an API answers its other requests (and its health checks) meanwhile.
    expect(text.turns).toBeGreaterThan(0);
    expect(text.value).toEqual(formatAsText(page(LARGE)));
    const md = await formatPage('markdown', page(LARGE));
    expect(md).toEqual(formatAsMarkdown(page(LARGE)));
  }, 60_000);

  it('converts a small page where it is asked', async () => {
    const small = await turnsDuring(() => formatPage('markdown', page(ARTICLE_HTML)));
    expect(small.turns).toBe(0);
    expect(small.value).toEqual(formatAsMarkdown(page(ARTICLE_HTML)));
  });

  it('gives the same UnsupportedFormatError from the thread as inline, and serves the next page after it', async () => {
    const binary = { ...page(LARGE), contentType: 'application/pdf' };
    await expect(formatPage('text', binary)).rejects.toBeInstanceOf(UnsupportedFormatError);
    await expect(formatPage('text', binary)).rejects.toThrow(/needs an HTML or text page \(this one is application\/pdf\)/);
    const several = await Promise.all([formatPage('text', page(LARGE)), formatPage('markdown', page(LARGE))]);
    expect(several.map((s) => s.text.length > 0)).toEqual([true, true]);
  }, 60_000);
});
