import { describe, expect, it } from 'vitest';
import { CrawlerError, silentLogger } from '@crawler/core';
import { FetchError, type FetchResult } from '@crawler/fetchers';
import { challengePage } from '@crawler/testkit';
import { readRobots } from './robots-read.js';

const ORIGIN = 'http://shop.example';

function response(status: number, body: string, contentType: string, extra: Partial<FetchResult> = {}): FetchResult {
  return {
    fetcher: 'simple_http',
    url: `${ORIGIN}/robots.txt`,
    finalUrl: `${ORIGIN}/robots.txt`,
    status,
    headers: { 'content-type': contentType },
    body: new TextEncoder().encode(body),
    contentType,
    text: body,
    redirectChain: [],
    timings: { startedAt: 0, headersMs: 1, totalMs: 1 },
    ...extra,
  };
}

const read = (tool: string, answer: FetchResult | Error) =>
  readRobots(ORIGIN, tool, async (url) => {
    expect(url).toBe(`${ORIGIN}/robots.txt`);
    if (answer instanceof Error) throw answer;
    return answer;
  }, silentLogger);

describe('reading robots.txt', () => {
  it('returns the file as served', async () => {
    expect(await read('simple_http', response(200, 'User-agent: *\nDisallow: /private\n', 'text/plain'))).toEqual({ status: 200, body: 'User-agent: *\nDisallow: /private\n', retryAfterMs: null });
    expect(await read('simple_http', response(404, 'not found', 'text/html'))).toMatchObject({ status: 404 });
  });

  it('keeps a 429 with the Retry-After it asks for', async () => {
    const limited = response(429, 'slow down', 'text/html', { headers: { 'content-type': 'text/html', 'retry-after': '20' } });
    expect(await read('simple_http', limited)).toEqual({ status: 429, body: 'slow down', retryAfterMs: 20_000 });
  });

  it('names a browser when plain HTTP cannot parse the head Chromium reads', async () => {
    const refused = new FetchError('wrong_tool', 'HPE_LF_EXPECTED: bare LF in the status line');
    expect(await read('simple_http', refused)).toEqual({ browser: { fetcher: 'playwright', reason: 'wrong_tool: HPE_LF_EXPECTED: bare LF in the status line' } });
  });

  it("names a browser, with the wall's status, when plain HTTP is given a bot wall's page instead of the file", async () => {
    const wall = await read('simple_http', response(403, challengePage('cloudflare'), 'text/html', { headers: { 'content-type': 'text/html', server: 'cloudflare', 'cf-mitigated': 'challenge' } }));
    expect(wall).toMatchObject({ browser: { status: 403 } });
    expect(wall && 'browser' in wall ? wall.browser.fetcher : null).toMatch(/^playwright/);
  });

  it('names the next tool up when a browser is still walled, and the same tool when none is above it', async () => {
    const walled = (fetcher: string) => response(403, challengePage('cloudflare'), 'text/html', { fetcher, challenge: { vendor: 'cloudflare', kind: 'interstitial', firstVendor: 'cloudflare', firstKind: 'interstitial', cleared: false, waitedMs: 15_000, documents: [] } });
    expect(await read('playwright', walled('playwright'))).toMatchObject({ browser: { fetcher: 'playwright_stealth' } });
    expect(await read('playwright_stealth', walled('playwright_stealth'))).toMatchObject({ browser: { fetcher: 'playwright_stealth' } });
  });

  it('reads a browser-rendered page as the file, without judging it as a probe', async () => {
    expect(await read('playwright', response(200, 'User-agent: *\nDisallow:\n', 'text/html', { fetcher: 'playwright' }))).toMatchObject({ status: 200, body: 'User-agent: *\nDisallow:\n' });
  });

  it('answers unreachable, with what the network said, for a network failure, and throws refusals of the URL, its certificate or every proxy', async () => {
    expect(await read('simple_http', new FetchError('network_error', 'ECONNRESET: socket hang up'))).toEqual({ unreachable: { reason: 'network_error: ECONNRESET: socket hang up' } });
    expect(await read('simple_http', new FetchError('timeout', 'no answer in 10000 ms'))).toEqual({ unreachable: { reason: 'timeout: no answer in 10000 ms' } });
    await expect(read('simple_http', new FetchError('tls_error', 'CERT_HAS_EXPIRED: certificate has expired'))).rejects.toThrow(/certificate/);
    await expect(read('simple_http', new CrawlerError('proxy_unavailable', 'every proxy is down'))).rejects.toThrow(/proxy/);
  });
});
