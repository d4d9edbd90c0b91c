/**
 * A site of two kinds, end to end: a JavaScript app under /app (only a browser renders it) and static articles under
 * /blog on the same host, as on real sites (an SPA at example.com/app beside a static example.com/blog). Once the app's
 * pages have taught the router that the domain needs a browser, the blog's pages must not all pay for one: the blog is
 * a section of its own, and its own pages say plain HTTP serves it. Real Postgres, Redis and Chromium; pages one at a
 * time, each after the previous settled, so what the router knew at each page is fixed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { jsRenderedPage, startTestServer, staticArticle, type Route, type TestServer } from '@crawler/testkit';
import { LEARNING_DEFAULTS } from '@crawler/core';
import { classifyClient } from '@crawler/sim-web';
import { startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let server: TestServer | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await server?.close();
  crawler = undefined;
  server = undefined;
});

const APP_PAGES = 8;
const BLOG_PAGES = 40;
const LATER_APP_PAGES = 3;

describe('end to end: a site with an app section and a static section', () => {
  it('routes the static /blog to plain HTTP once its own pages show it, while /app keeps its browser', async () => {
    const routes: Record<string, Route> = {};
    for (let i = 0; i < APP_PAGES + LATER_APP_PAGES; i++) routes[`/app/p${i}`] = { body: jsRenderedPage({ title: `App view ${i}` }) };
    // What the blog's readers cost, counted at the site: each request's client, told from its raw headers.
    const blogClients: string[] = [];
    for (let i = 0; i < BLOG_PAGES; i++) {
      const html = staticArticle({ title: `Post ${i}` });
      routes[`/blog/post-${i}`] = (req, res) => {
        blogClients.push(classifyClient(req.rawHeaders));
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      };
    }
    server = await startTestServer(routes, { host: '127.0.0.21' });
    crawler = await startE2e('sections', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:2,playwright:1', FETCH_TIMEOUT_MS: '30000' });
    const prisma = crawler.db.prisma;
    crawler.runtime.startWorkers();

    /** Crawl the paths one at a time; per page, the fetchers of its attempts in order. */
    const crawl = async (paths: string[]): Promise<string[][]> => {
      const out: string[][] = [];
      for (const path of paths) {
        const url = server!.url(path);
        await crawler!.runtime.enqueue([url]);
        await crawler!.runtime.waitUntilIdle();
        const link = await prisma.link.findUniqueOrThrow({ where: { url }, include: { attempts: { orderBy: { id: 'asc' } } } });
        expect(link.status, `${path}: ${JSON.stringify(link.attempts.map((a) => [a.fetcher, a.success, a.errorType]))}`).toBe('done');
        out.push(link.attempts.map((a) => `${a.fetcher}:${a.selectionSource}`));
      }
      return out;
    };
    const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => i + from);

    // The app teaches the domain a browser: every page of it needs one.
    const app = await crawl(range(APP_PAGES).map((i) => `/app/p${i}`));
    expect(app.every((attempts) => attempts.at(-1)?.startsWith('playwright:'))).toBe(true);

    const blog = await crawl(range(BLOG_PAGES).map((i) => `/blog/post-${i}`));
    const blogBrowserAttempts = blog.flat().filter((a) => a.startsWith('playwright')).length;
    const browserRequests = blogClients.filter((c) => c === 'browser').length;
    const summary = JSON.stringify(blog);
    // Not vacuous: the first pages did go to the browser, and the site told them apart.
    expect(browserRequests, summary).toBeGreaterThan(0);
    // Until the blog has the minimum sample of its own it is judged by its domain (the browser); from then on by its
    // own pages. Before sections, every one of the 40 went to the browser.
    expect(blogBrowserAttempts, summary).toBeLessThanOrEqual(LEARNING_DEFAULTS.minSampleSize);
    expect(browserRequests, summary).toBeLessThanOrEqual(LEARNING_DEFAULTS.minSampleSize);
    // The second half of the blog is plain HTTP only, one request a page (remembered or learned: the router's
    // decision cache decides which source a page shows, by time).
    const secondHalf = blog.slice(BLOG_PAGES / 2);
    expect(secondHalf.every((attempts) => attempts.length === 1 && attempts[0]!.startsWith('simple_http:')), summary).toBe(true);
    expect(range(BLOG_PAGES / 2, BLOG_PAGES / 2).every((i) => server!.hits(`/blog/post-${i}`) === 1)).toBe(true);
    // And the store now says so by itself: the blog's own score is plain HTTP, confidently, while its domain's is not.
    const own = await crawler.attempts.findBestFetcher([{ type: 'domain', value: '127.0.0.21' }], { alone: { type: 'section', value: '127.0.0.21/blog' } });
    expect(own.alone?.attempts).toBe(blog.flat().length);
    expect(own.alone?.result.best).toMatchObject({ fetcher: 'simple_http' });
    expect(own.alone!.result.best!.confidence).toBeGreaterThan(LEARNING_DEFAULTS.confidenceThreshold);

    // And the blog's plain-HTTP evidence does not send the app back to plain HTTP: straight to the browser.
    const later = await crawl(range(LATER_APP_PAGES, APP_PAGES).map((i) => `/app/p${i}`));
    expect(later, JSON.stringify(later)).toEqual(range(LATER_APP_PAGES).map(() => [expect.stringMatching(/^playwright:/)]));
  }, 600_000);
});
