import { describe, expect, it } from 'vitest';
import { extractJsonFeedLinks } from './extract-json-feed-links.js';
import { extractLinks } from './extract-links.js';

const FEED = 'https://site.test/blog/feed.json';

describe('extractJsonFeedLinks', () => {
  it("reads a JSON Feed: the home page, the next page and each item's url, relative ones against the feed", () => {
    const feed = {
      version: 'https://jsonfeed.org/version/1.1',
      title: 'News',
      home_page_url: 'https://site.test/',
      feed_url: 'https://site.test/blog/feed.json',
      next_url: 'feed.json?page=2',
      icon: 'https://site.test/icon.png',
      items: [
        { id: '1', url: 'https://site.test/posts/a?utm_source=feed', content_text: 'a', attachments: [{ url: 'https://site.test/a.mp3', mime_type: 'audio/mpeg' }] },
        { id: 'https://site.test/posts/id-only', content_html: '<p>b</p>' },
        { id: '3', url: '../posts/c', external_url: 'https://elsewhere.test/story', image: 'https://site.test/c.png' },
        { id: '4', url: 'https://site.test/posts/a' },
        { id: '5', url: 42 },
        'not an item',
      ],
    };
    const r = extractJsonFeedLinks(JSON.stringify(feed), FEED);
    expect(r?.links.map((l) => l.url)).toEqual(['https://site.test/', 'https://site.test/blog/feed.json?page=2', 'https://site.test/posts/a', 'https://site.test/posts/c']);
    expect(r?.truncated).toBe(0);
    // Version 1 feeds say so with the same prefix.
    expect(extractJsonFeedLinks(JSON.stringify({ version: 'https://jsonfeed.org/version/1', items: [{ url: '/x' }] }), FEED)?.links.map((l) => l.url)).toEqual(['https://site.test/x']);
  });

  it('is null for other JSON and for text that is not JSON, and keeps to maxLinks', () => {
    expect(extractJsonFeedLinks('{"items": [{"url": "/x"}]}', FEED)).toBeNull();
    expect(extractJsonFeedLinks('[1, 2]', FEED)).toBeNull();
    expect(extractJsonFeedLinks('<rss></rss>', FEED)).toBeNull();
    const many = { version: 'https://jsonfeed.org/version/1.1', items: Array.from({ length: 10 }, (_, i) => ({ url: `/p/${i}` })) };
    const r = extractJsonFeedLinks(JSON.stringify(many), FEED, { maxLinks: 4 });
    expect([r?.links.length, r?.truncated]).toEqual([4, 6]);
  });

  it('is a feed a seed page may name with <link rel=alternate type=application/feed+json>', () => {
    const page = '<html><head><link rel="alternate" type="application/feed+json" title="JSON" href="/feed.json"></head><body></body></html>';
    expect(extractLinks(page, 'https://site.test/').links.map((l) => l.url)).toEqual(['https://site.test/feed.json']);
  });
});
