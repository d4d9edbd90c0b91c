import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestHtml } from './parse-page.js';
import { listPageUrls, loopbackHost, startSyntheticWeb, type SyntheticWeb } from './synthetic-web.js';

describe('synthetic web', () => {
  let web: SyntheticWeb;
  beforeAll(async () => {
    web = await startSyntheticWeb({ pages: 10, domains: 2 });
  });
  afterAll(async () => {
    await web.close();
  });

  it('spreads pages round-robin over distinct loopback hosts', () => {
    expect(web.origins).toHaveLength(2);
    expect(new URL(web.origins[0]!).hostname).not.toBe(new URL(web.origins[1]!).hostname);
    expect(web.urls).toEqual(listPageUrls(web.origins, 10));
    expect(web.urls[3]).toBe(`${web.origins[1]}/story/3`);
  });

  it('serves realistic, deterministic pages of 10-60 KB with title and links', async () => {
    const a = await (await fetch(web.urls[4]!)).text();
    const b = await (await fetch(web.urls[4]!)).text();
    expect(a).toBe(b);
    expect(Buffer.byteLength(a)).toBeGreaterThanOrEqual(10_240);
    expect(Buffer.byteLength(a)).toBeLessThan(63_000);
    const digest = digestHtml(a, web.urls[4]!);
    expect(digest.title).toBe('Harbour Gazette story 4');
    expect(digest.links).toBeGreaterThan(10);
    expect(a).toContain('<script');
  });

  it('counts requests per page, robots.txt and other paths separately, and resets', async () => {
    web.resetCounts();
    await (await fetch(web.urls[3]!)).text();
    await (await fetch(web.urls[3]!)).text();
    await (await fetch(web.urls[5]!, { method: 'HEAD' })).text();
    await (await fetch(`${web.origins[0]}/robots.txt`)).text();
    // Page 3 lives on domain 1: asking domain 0 for it is a 404, not a page request.
    const wrongHost = await fetch(`${web.origins[0]}/story/3`);
    expect(wrongHost.status).toBe(404);
    await wrongHost.text();

    const stats = web.stats();
    expect(stats.pageRequests).toBe(3);
    expect(stats.distinctPages).toBe(2);
    expect(stats.maxRequestsPerPage).toBe(2);
    expect(stats.robotsRequests).toBe(1);
    expect(stats.otherRequests).toBe(1);
    expect(stats.totalRequests).toBe(5);
    expect(stats.byMethod).toEqual({ GET: 4, HEAD: 1 });
    expect(web.requestsFor(web.urls[3]!)).toBe(2);
    expect(web.requestsFor(web.urls[0]!)).toBe(0);

    web.resetCounts();
    expect(web.stats().totalRequests).toBe(0);
    expect(web.requestsFor(web.urls[3]!)).toBe(0);
  });
});

describe('loopbackHost', () => {
  it('counts addresses past the last octet, so hundreds of hosts get distinct loopback addresses', () => {
    expect(loopbackHost(10)).toBe('127.0.0.10');
    expect(loopbackHost(255)).toBe('127.0.0.255');
    expect(loopbackHost(256)).toBe('127.0.1.0');
    expect(loopbackHost(509)).toBe('127.0.1.253');
    expect(new Set(Array.from({ length: 500 }, (_, d) => loopbackHost(10 + d))).size).toBe(500);
    expect(() => loopbackHost(0)).toThrow(RangeError);
  });
});
