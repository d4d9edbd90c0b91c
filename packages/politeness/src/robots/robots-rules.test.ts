import { describe, expect, it } from 'vitest';
import { compileRobots, rulesFromFetch } from './robots-rules.js';

const ORIGIN = 'http://site.test';
const NOW = 1_000_000;
const body = ['User-agent: *', 'Disallow: /private', 'Allow: /private/open', 'Crawl-delay: 2.5', '', 'User-agent: otherbot', 'Disallow: /'].join('\n');

describe('rulesFromFetch (RFC 9309 status rules)', () => {
  it('parses 2xx and trusts it for the full ttl', () => {
    expect(rulesFromFetch({ status: 200, body }, NOW, 100, 10)).toEqual({ kind: 'parsed', status: 200, body, expiresAtMs: NOW + 100 });
  });
  it('reads 4xx as "no robots.txt": allow all for the full ttl', () => {
    expect(rulesFromFetch({ status: 404, body: '' }, NOW, 100, 10)).toEqual({ kind: 'allow_all', status: 404, expiresAtMs: NOW + 100 });
  });
  it('reads 5xx and unreachable as complete disallow, cached only briefly', () => {
    expect(rulesFromFetch({ status: 503, body: '' }, NOW, 100, 10)).toEqual({ kind: 'disallow_all', status: 503, expiresAtMs: NOW + 10 });
    expect(rulesFromFetch(null, NOW, 100, 10)).toEqual({ kind: 'disallow_all', status: null, expiresAtMs: NOW + 10 });
  });
  it('reads 429 as a rate limit kept until its Retry-After (briefly without one), not as an outage', () => {
    expect(rulesFromFetch({ status: 429, body: '', retryAfterMs: 40 }, NOW, 100, 10)).toEqual({ kind: 'rate_limited', status: 429, expiresAtMs: NOW + 40 });
    expect(rulesFromFetch({ status: 429, body: '' }, NOW, 100, 10)).toEqual({ kind: 'rate_limited', status: 429, expiresAtMs: NOW + 10 });
    const verdict = compileRobots(ORIGIN, rulesFromFetch({ status: 429, body: '', retryAfterMs: 40 }, NOW, 100, 10), 'bot', 60_000).verdict(new URL(`${ORIGIN}/a`));
    expect(verdict).toMatchObject({ allowed: false, rateLimited: { retryAtMs: NOW + 40 } });
    expect(verdict.unreachable).toBeUndefined();
  });
  it('reads "only a browser can read it" as a disallow naming the browser, kept as briefly as an outage', () => {
    const rules = rulesFromFetch({ browser: { fetcher: 'playwright', reason: 'wrong_tool: bare LF' } }, NOW, 100, 10);
    expect(rules).toEqual({ kind: 'browser_only', fetcher: 'playwright', reason: 'wrong_tool: bare LF', expiresAtMs: NOW + 10 });
    const verdict = compileRobots(ORIGIN, rules, 'bot', 60_000).verdict(new URL(`${ORIGIN}/a`));
    expect(verdict).toMatchObject({ allowed: false, browser: { fetcher: 'playwright', retryAtMs: NOW + 10 } });
    expect(verdict.unreachable).toBeUndefined();
  });
  it('keeps only the first 500 KiB of a huge file', () => {
    const rules = rulesFromFetch({ status: 200, body: 'x'.repeat(600 * 1024) }, NOW, 100, 10);
    expect(rules.kind === 'parsed' && rules.body.length).toBe(500 * 1024);
  });
});

describe('compileRobots', () => {
  const robots = compileRobots(ORIGIN, rulesFromFetch({ status: 200, body }, NOW, 100, 10), 'CrawlerBot/1.0', 60_000);

  it('disallows a matching path with a reason naming the rule line', () => {
    const verdict = robots.verdict(new URL(`${ORIGIN}/private/page`));
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toBe('robots.txt of http://site.test disallows /private/page for user-agent "CrawlerBot/1.0" (line 2)');
  });
  it('allows other paths and the longer Allow rule', () => {
    expect(robots.verdict(new URL(`${ORIGIN}/public`)).allowed).toBe(true);
    expect(robots.verdict(new URL(`${ORIGIN}/private/open/x`)).allowed).toBe(true);
  });
  it('reports Crawl-delay in milliseconds', () => {
    expect(robots.crawlDelayMs).toBe(2500);
    expect(robots.verdict(new URL(`${ORIGIN}/public`)).crawlDelayMs).toBe(2500);
  });
  it('applies the group of a named user agent', () => {
    const other = compileRobots(ORIGIN, rulesFromFetch({ status: 200, body }, NOW, 100, 10), 'otherbot', 60_000);
    expect(other.verdict(new URL(`${ORIGIN}/public`)).allowed).toBe(false);
    expect(other.verdict(new URL(`${ORIGIN}/robots.txt`)).allowed).toBe(true);
  });
  it('caps an absurd Crawl-delay', () => {
    const slow = compileRobots(ORIGIN, rulesFromFetch({ status: 200, body: 'User-agent: *\nCrawl-delay: 86400' }, NOW, 100, 10), 'bot', 60_000);
    expect(slow.crawlDelayMs).toBe(60_000);
  });
  it('disallows everything with an explanation while robots.txt is unreachable', () => {
    const down = compileRobots(ORIGIN, rulesFromFetch({ status: 500, body: '' }, NOW, 100, 10), 'bot', 60_000);
    const verdict = down.verdict(new URL(`${ORIGIN}/anything`));
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toContain('answered 500');
  });
  it('allows everything when there is no robots.txt', () => {
    const none = compileRobots(ORIGIN, rulesFromFetch({ status: 404, body: '' }, NOW, 100, 10), 'bot', 60_000);
    expect(none.verdict(new URL(`${ORIGIN}/private`))).toEqual({ allowed: true, crawlDelayMs: null });
  });
});
