import { describe, expect, it } from 'vitest';
import { enqueueInParts, notFiles, sitemapSeedNote, splitPositionals } from './crawl.js';
import { captureIO } from '../__fixtures__/capture-io.js';
import { runCli } from '../cli.js';
import { checkBrowserExecutable, configFrom } from '../crawler/cli-context.js';

describe('crawl: which arguments are files of URLs', () => {
  const exists = (p: string) => p === 'urls.txt' || p === 'lists/more';
  it('treats only existing files and "-" as files; URLs, typos and bare words are URLs to validate one by one', () => {
    expect(splitPositionals(['https://a.example/', 'urls.txt', 'not a url', 'example.com/page', '-', 'lists/more', 'missing.txt'], exists)).toEqual({
      urls: ['https://a.example/', 'not a url', 'example.com/page', 'missing.txt'],
      files: ['urls.txt', '-', 'lists/more'],
    });
  });
  it('names the candidates that look like a missing file of URLs', () => {
    expect(notFiles(['missing.txt', './lists/seeds', '/tmp/urls.CSV', 'example.com/page', 'https://a.example/x.txt', 'not a url'])).toEqual(['missing.txt', './lists/seeds', '/tmp/urls.CSV']);
  });
  it('never reads a file for something with a scheme, even if a file of that name exists', () => {
    expect(splitPositionals(['ftp://x/y', 'javascript:alert(1)'], () => true)).toEqual({ urls: ['ftp://x/y', 'javascript:alert(1)'], files: [] });
  });
});

describe('crawl: URLs go in in parts while the workers run', () => {
  function fakeRuntime() {
    const calls: string[][] = [];
    return {
      calls,
      enqueue: async (urls: readonly string[]) => {
        calls.push([...urls]);
        return {
          accepted: urls.filter((u) => u.startsWith('https:')).map((u) => ({ input: u, url: u, linkId: `id:${u}`, created: true, queued: true })),
          rejected: urls.filter((u) => !u.startsWith('https:')).map((u) => ({ input: u, code: 'invalid_url', message: 'no' })),
        };
      },
    };
  }

  it('enqueues in order, part by part, and answers as one call would', async () => {
    const rt = fakeRuntime();
    const urls = ['https://a/1', 'bad', 'https://a/2', 'https://a/3', 'worse', 'https://a/4', 'https://a/5'];
    const out = await enqueueInParts(rt, urls, {}, 3);
    expect(rt.calls).toEqual([urls.slice(0, 3), urls.slice(3, 6), urls.slice(6)]);
    expect(out.accepted.map((a) => a.input)).toEqual(['https://a/1', 'https://a/2', 'https://a/3', 'https://a/4', 'https://a/5']);
    expect(out.rejected.map((r) => r.input)).toEqual(['bad', 'worse']);
  });

  it('makes one call for a part as large as the list, and one for an empty list', async () => {
    const rt = fakeRuntime();
    await enqueueInParts(rt, ['https://a/1', 'https://a/2'], {}, 2);
    await enqueueInParts(rt, [], {}, 250);
    expect(rt.calls).toEqual([['https://a/1', 'https://a/2'], []]);
  });
});

describe('commands that run browser workers, and CHROMIUM_PATH', () => {
  // Nothing listens at these addresses: a command that got past the check would fail on its connections instead.
  const env = { DATABASE_URL: 'postgresql://crawler@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1', CHROMIUM_PATH: '/nonexistent/chromium' };

  it('refuses a Chromium it cannot launch before opening a connection, naming the variable', async () => {
    for (const args of [['run', '--until-idle'], ['run', '--fetchers', 'playwright'], ['crawl', 'https://a.example/'], ['crawl', '--follow', 'https://a.example/']]) {
      const t = captureIO();
      t.io.env = env;
      expect(await runCli(args, t.io), args.join(' ')).toBe(2);
      expect(t.err(), args.join(' ')).toMatch(/^crawl \w+: invalid configuration: CHROMIUM_PATH="\/nonexistent\/chromium": no such file; the browser fetchers this process serves \(playwright/);
    }
  });

  it('takes the direct_access alias in crawl run --fetchers, as FETCHERS does', async () => {
    // Past the fetcher-name check, the command meets the Chromium check: proof that direct_access was taken.
    const t = captureIO();
    t.io.env = env;
    expect(await runCli(['run', '--fetchers', 'direct_access,playwright'], t.io)).toBe(2);
    expect(t.err()).not.toMatch(/not in FETCHERS/);
    expect(t.err()).toMatch(/CHROMIUM_PATH="\/nonexistent\/chromium"/);
  });

  it('does not look at it when the command runs no browser fetcher', () => {
    const t = captureIO();
    expect(() => checkBrowserExecutable(configFrom(t.io, { ...env, FETCHERS: 'simple_http,playwright' }), ['simple_http'])).not.toThrow();
    expect(() => checkBrowserExecutable(configFrom(t.io, { ...env, FETCHERS: 'simple_http' }))).not.toThrow();
    expect(() => checkBrowserExecutable(configFrom(t.io, { ...env, FETCHERS: 'simple_http,playwright' }))).toThrow(/CHROMIUM_PATH/);
  });
});

describe('crawl --follow with a sitemap as its seed', () => {
  it('says that without --sitemaps a sitemap seed gives no links, and what to add', () => {
    expect(sitemapSeedNote(['https://a.example/', 'https://a.example/sitemap_index.xml'], false)).toMatch(/^crawl crawl: https:\/\/a\.example\/sitemap_index\.xml is a sitemap: .*--sitemaps/);
    expect(sitemapSeedNote(['https://a.example/sitemap.xml'], true)).toBeNull();
    expect(sitemapSeedNote(['https://a.example/', 'https://a.example/feed.xml', 'not a url'], false)).toBeNull();
  });
});
