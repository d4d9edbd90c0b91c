import { describe, expect, it } from 'vitest';
import { fetchQueueName, fetcherOfQueue, assertQueuePrefix } from './queue-names.js';
import { FetchJobSchema, RouteJobSchema } from './payloads.js';
import { fetchJobId, routeJobId } from './job-options.js';
import { parseJobData, InvalidJobPayloadError } from '../parse-job.js';

const linkId = '3f2b8c1e-2d4a-4c5b-9e6f-0a1b2c3d4e5f';

describe('queue names', () => {
  it('maps fetchers onto queues, aliases onto the canonical queue', () => {
    expect(fetchQueueName('simple_http')).toBe('fetch-simple_http');
    expect(fetchQueueName('direct_access')).toBe('fetch-simple_http');
    expect(fetchQueueName('Playwright_Stealth')).toBe('fetch-playwright_stealth');
    expect(fetcherOfQueue('fetch-playwright')).toBe('playwright');
    expect(fetcherOfQueue('route')).toBeNull();
  });

  it('refuses names and prefixes that would break BullMQ key layout', () => {
    expect(() => fetchQueueName('bad:name')).toThrow(/invalid fetcher name/);
    expect(() => assertQueuePrefix('a:b')).toThrow(/invalid queue prefix/);
    expect(() => assertQueuePrefix('')).toThrow(/invalid queue prefix/);
    expect(assertQueuePrefix('{crawler}')).toBe('{crawler}');
  });
});

describe('job ids', () => {
  it('uses the link id for the first route job and distinct ids after', () => {
    expect(routeJobId(linkId)).toBe(linkId);
    expect(routeJobId(linkId, 2)).toBe(`${linkId}.g2`);
    expect(fetchJobId(linkId, 1, 'playwright', true)).toBe(`${linkId}.a1.playwright.retry`);
    expect(fetchJobId(linkId, 0, 'simple_http')).not.toContain(':');
    expect(fetchJobId(linkId, 1, 'playwright', false, 3)).toBe(`${linkId}.g3.a1.playwright`);
  });
});

describe('payloads', () => {
  it('fills defaults on a route job', () => {
    expect(RouteJobSchema.parse({ linkId, url: 'https://a.example/' })).toEqual({ linkId, url: 'https://a.example/', generation: 0, reason: 'enqueue' });
  });

  it('carries the escalation of a blocked link on its re-route, and rejects an empty fetcher name', () => {
    const job = RouteJobSchema.parse({ linkId, url: 'https://a.example/', generation: 1, reason: 'resume', nextFetcher: 'playwright_stealth', blockedFetcher: 'playwright' });
    expect(job).toMatchObject({ nextFetcher: 'playwright_stealth', blockedFetcher: 'playwright' });
    expect(RouteJobSchema.safeParse({ linkId, url: 'https://a.example/', nextFetcher: ' ' }).success).toBe(false);
  });

  it('accepts a fetch job with a probe reference', () => {
    const job = FetchJobSchema.parse({ linkId, url: 'https://a.example/', fetcher: 'simple_http', selectionSource: 'probe', probe: { key: 'k', status: 200, bodyBytes: 10 } });
    expect(job.probe?.key).toBe('k');
  });

  it('fails a bad payload with an unrecoverable error naming the fields', () => {
    let caught: unknown;
    try {
      parseJobData(FetchJobSchema, { linkId: 'nope', url: 'x' }, { queue: 'fetch-simple_http', jobId: '7' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidJobPayloadError);
    expect((caught as Error).message).toMatch(/fetch-simple_http job 7: .*linkId/);
    expect((caught as InvalidJobPayloadError).code).toBe('invalid_payload');
  });
});
