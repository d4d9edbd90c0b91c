import { describe, expect, it } from 'vitest';
import { buildCrawlReport, formatCrawlReport } from './crawl-report.js';

const row = (url: string, status: string, extra: Partial<Parameters<typeof buildCrawlReport>[0][number]> = {}) => ({
  url, status, fetcher: 'simple_http', selectionSource: 'probe', attemptCount: 1, lastErrorType: null, lastError: null, pausedUntil: null, ...extra,
});

describe('crawl report', () => {
  it('totals links by status and decisions by source, and reports pauses and errors', () => {
    const until = new Date('2026-01-01T00:10:00Z');
    const report = buildCrawlReport(
      [
        row('https://a/', 'done', { lastErrorType: 'wrong_tool', attemptCount: 2, selectionSource: 'retry' }),
        row('https://b/', 'failed', { lastErrorType: 'no_route', lastError: 'no_route: nothing routes it', fetcher: null, selectionSource: null, attemptCount: 0 }),
        row('https://c/', 'paused', { lastErrorType: 'blocked_captcha', pausedUntil: until }),
      ],
      [{ input: 'ftp://x', code: 'invalid_url', message: 'unsupported scheme ftp' }],
    );
    expect(report.totals).toEqual({ links: 3, done: 1, failed: 1, paused: 1, other: 0, rejected: 1, attempts: 3, bySource: { retry: 1, probe: 1 } });
    expect(report.links[0]!.errorType).toBeNull();
    expect(report.links[1]).toMatchObject({ errorType: 'no_route', error: 'no_route: nothing routes it' });
    expect(report.links[2]).toMatchObject({ errorType: 'blocked_captcha', pausedUntil: until.toISOString() });
    const text = formatCrawlReport(report);
    expect(text).toContain(`until ${until.toISOString()} (blocked_captcha)`);
    expect(text).toContain('rejected ftp://x: unsupported scheme ftp');
    expect(text).toContain('https://b/ no_route: nothing routes it');
    expect(text).toContain('3 links: 1 done, 1 failed, 1 paused; 1 rejected; 3 attempts');
  });

  it('says how to crawl a local or private host when a link was refused for its address', () => {
    const refused = row('http://127.0.0.1:8080/', 'failed', { lastErrorType: 'blocked_address', lastError: 'refused: the target is not a public address', fetcher: null, selectionSource: null, attemptCount: 0 });
    const text = formatCrawlReport(buildCrawlReport([refused, row('https://a/', 'done')], []));
    expect(text).toMatch(/1 link was refused because its address is not public[^\n]*FETCH_ALLOW_HOSTS=127\.0\.0\.0\/8/);
    // Nothing of it when no link was refused for its address.
    expect(formatCrawlReport(buildCrawlReport([row('https://a/', 'done')], []))).not.toMatch(/FETCH_ALLOW_HOSTS/);
  });

  it('says what empty_content means when a link failed with it', () => {
    const tiny = row('http://127.0.0.1:8080/hello.html', 'failed', { lastErrorType: 'empty_content', lastError: 'empty_content:playwright', fetcher: 'playwright' });
    const text = formatCrawlReport(buildCrawlReport([tiny, tiny, row('https://a/', 'done')], []));
    expect(text).toMatch(/2 links failed empty_content: fewer than 200 visible characters/);
    expect(formatCrawlReport(buildCrawlReport([row('https://a/', 'done')], []))).not.toMatch(/visible characters/);
  });
});
