import { describe, expect, it } from 'vitest';
import type { FetchRequest } from '@crawler/fetchers';
import { createFetchProcessor, type FetchSettings } from './fetch-processor.js';
import type { OutcomeWrite, RevisitSource } from '../ports.js';
import { STATIC_HTML, fakeJob, makeHarness, response } from '../__fixtures__/fakes.js';

const settings: FetchSettings = { fetcherNames: ['simple_http', 'playwright'], maxAttempts: 4, pauseMaxMs: 24 * 3600_000, fetchTimeoutMs: 1000, fetchMaxBytes: 1 << 20 };

/** A fetch processor whose fetcher answers `answer` and records the request headers it was sent. */
function setup(validators: { fetcher: string; etag: string | null; lastModified: string | null } | null, answer: ReturnType<typeof response>, linkPatch: Record<string, unknown> = {}) {
  const h = makeHarness();
  const link = h.links.add('https://cond.example/page', { status: 'fetching', lastAttemptAt: new Date('2025-12-01T00:00:00Z'), ...linkPatch });
  const sent: Array<Record<string, string> | undefined> = [];
  const writes: OutcomeWrite[] = [];
  const discovered: Array<{ text: string | null }> = [];
  const revisits: RevisitSource = {
    validators: async () => (validators ? { contentId: 1n, version: 1, sha256: 'x', ...validators } : null),
    latestPage: async () => ({ body: new TextEncoder().encode(STATIC_HTML), contentType: 'text/html', finalUrl: link.url, headers: { 'content-type': 'text/html; charset=utf-8' } }),
  };
  const process = createFetchProcessor({
    ...h.common, settings, enqueueRoute: h.enqueueRoute, probeStore: h.probeStore, revisits,
    outcomes: { apply: async (w) => (writes.push(w), h.outcomes.apply(w)) },
    fetchers: {
      get: (name) => ({
        name, close: async () => {},
        fetch: async (req: FetchRequest) => {
          sent.push(req.headers);
          return { ...answer, fetcher: name };
        },
      }),
    },
    discovery: { discover: async (page) => (discovered.push({ text: page.text }), { offScope: null }) },
  });
  return { h, link, process, sent, writes, discovered };
}

const job = (linkId: string, url: string, fetcher = 'simple_http') => fakeJob({ linkId, url, fetcher, selectionSource: 'revisit' }, `fetch-${fetcher}`);
const NOT_MODIFIED = response('https://cond.example/page', { status: 304, body: new Uint8Array(0), text: '', headers: { etag: '"v1"' } });

describe('conditional revisits', () => {
  it('sends If-None-Match and If-Modified-Since from the stored version, and a 304 is a success that stores no body', async () => {
    const t = setup({ fetcher: 'simple_http', etag: '"v1"', lastModified: 'Wed, 01 Apr 2026 00:00:00 GMT' }, NOT_MODIFIED);
    const out = await t.process(job(t.link.id, t.link.url));
    expect(t.sent).toEqual([{ 'if-none-match': '"v1"', 'if-modified-since': 'Wed, 01 Apr 2026 00:00:00 GMT' }]);
    expect(out).toMatchObject({ outcome: 'done', attempts: 1, httpStatus: 304 });
    expect(t.writes).toHaveLength(1);
    expect(t.writes[0]!.page).toBeUndefined();
    expect(t.writes[0]!.notModified).toMatchObject({ fetcher: 'simple_http', httpStatus: 304, finalUrl: t.link.url });
    expect(t.writes[0]!.attempts).toMatchObject([{ fetcher: 'simple_http', success: true, httpStatus: 304, errorType: null }]);
    expect(t.writes[0]!.link).toMatchObject({ status: 'done' });
  });

  it('sends nothing conditional on a first visit, for a version a browser stored, or without validators', async () => {
    for (const [validators, patch] of [
      [{ fetcher: 'simple_http', etag: '"v1"', lastModified: null }, { lastAttemptAt: null }],
      [{ fetcher: 'playwright', etag: '"v1"', lastModified: null }, {}],
      [{ fetcher: 'simple_http', etag: null, lastModified: null }, {}],
      [null, {}],
    ] as const) {
      const t = setup(validators, response('https://cond.example/page', { html: STATIC_HTML }), patch);
      const out = await t.process(job(t.link.id, t.link.url));
      expect(t.sent).toEqual([undefined]);
      expect(out).toMatchObject({ outcome: 'done', httpStatus: 200 });
      expect(t.writes[0]!.page).toBeDefined();
    }
  });

  it('never makes a browser request conditional', async () => {
    const t = setup({ fetcher: 'simple_http', etag: '"v1"', lastModified: null }, response('https://cond.example/page', { html: STATIC_HTML }));
    await t.process(job(t.link.id, t.link.url, 'playwright'));
    expect(t.sent).toEqual([undefined]);
  });

  it("follows the stored page's links for a crawl when the answer is a 304", async () => {
    const t = setup({ fetcher: 'simple_http', etag: '"v1"', lastModified: null }, NOT_MODIFIED, { crawlId: '00000000-0000-4000-8000-00000000000c' });
    await t.process(job(t.link.id, t.link.url));
    expect(t.discovered).toHaveLength(1);
    expect(t.discovered[0]!.text).toContain('A static page');
  });
});
