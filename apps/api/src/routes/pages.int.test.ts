/** GET /links/:id/content and GET /export against a real Postgres: pages stored by the store, read back by HTTP. */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { ContentStore, LinkStore } from '@crawler/db';
import { registerPagesRoutes } from './pages.js';

let db: TestDatabase;
let app: FastifyInstance;
let store: ContentStore;
let links: LinkStore;

beforeAll(async () => {
  db = await createTestDatabase('api_pages');
  store = new ContentStore({ prisma: db.prisma });
  links = new LinkStore(db.prisma);
  app = Fastify();
  registerPagesRoutes(app, { prisma: db.prisma });
});

afterAll(async () => {
  await app?.close();
  await db?.drop();
});

async function storePage(url: string, body: Uint8Array, headers: Record<string, string>, contentType: string | null): Promise<string> {
  const [link] = await links.upsertMany([{ url, initialUrl: url, domain: new URL(url).hostname }]);
  await store.saveAndComplete({ linkId: link!.id, body, contentType, httpStatus: 200, finalUrl: url, fetcher: 'simple_http', headers }, { attemptsMade: 1 });
  return link!.id;
}

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

// A minimal but well-formed PDF, with binary bytes after the header as real PDFs have.
const PDF = Buffer.concat([
  Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1'),
  Buffer.from('1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n'),
  Buffer.from([0x00, 0xff, 0x80, 0x81, 0x0d, 0x0a]),
]);
// windows-1252: é, à, ü and € (0x80) are single bytes that are not valid UTF-8.
const LATIN = Buffer.from('<html><head><title>Caf\xe9</title></head><body><h1>D\xe9j\xe0 vu \xe0 Z\xfcrich</h1><p>Prix : 100 \x80</p></body></html>', 'latin1');
const HTML = Buffer.from('<!doctype html><html><head><title>Hello</title></head><body><h1>Hello</h1><p>A <a href="/next">link</a>.</p></body></html>');

describe('GET /links/:id/content', () => {
  it.each([
    ['an HTML page', 'https://pages.example/index.html', HTML, 'text/html; charset=utf-8', 'text/html'],
    ['a PDF', 'https://pages.example/report.pdf', PDF, 'application/pdf', 'application/pdf'],
    ['a windows-1252 page', 'https://pages.example/latin', LATIN, 'text/html; charset=windows-1252', 'text/html'],
  ])('answers %s byte for byte, with the content type it was fetched with', async (_what, url, body, header, mime) => {
    const id = await storePage(url, body, { 'content-type': header, server: 'test', 'content-encoding': 'gzip', 'set-cookie': 'sid=secret' }, mime);
    const res = await app.inject({ method: 'GET', url: `/links/${id}/content` });
    expect(res.statusCode).toBe(200);
    expect(Buffer.compare(res.rawPayload, body)).toBe(0);
    expect(res.headers['content-type']).toBe(header);
    expect(res.headers['etag']).toBe(`"${sha(body)}"`);
    expect(res.headers['content-length']).toBe(String(body.byteLength));
    // The body is stored decoded: the wire's content-encoding must not be replayed.
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-security-policy']).toContain('sandbox');
    const again = await app.inject({ method: 'GET', url: `/links/${id}/content`, headers: { 'if-none-match': `"${sha(body)}"` } });
    expect(again.statusCode).toBe(304);
    // As RFC 9110 reads If-None-Match: a list, a weak tag (a gzipping proxy in front weakens ours), or `*`.
    for (const inm of [`"other", "${sha(body)}"`, `W/"${sha(body)}"`, '*']) {
      expect((await app.inject({ method: 'GET', url: `/links/${id}/content`, headers: { 'if-none-match': inm } })).statusCode, inm).toBe(304);
    }
    expect((await app.inject({ method: 'GET', url: `/links/${id}/content`, headers: { 'if-none-match': '"other"' } })).statusCode).toBe(200);
    // Cookies the site set for the crawler are never stored.
    const [row] = await db.prisma.$queryRawUnsafe<Array<{ h: Record<string, string> }>>('SELECT response_headers AS h FROM fetched_content WHERE link = $1::uuid', id);
    expect(row!.h).toEqual({ 'content-type': header, server: 'test', 'content-encoding': 'gzip' });
  });

  it('converts to text and Markdown, decoding the page charset', async () => {
    const id = await storePage('https://pages.example/latin2', LATIN, { 'content-type': 'text/html; charset=windows-1252' }, 'text/html');
    const text = await app.inject({ method: 'GET', url: `/links/${id}/content?format=text` });
    expect(text.statusCode).toBe(200);
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(text.body).toContain('Déjà vu à Zürich');
    expect(text.body).toContain('100 €');
    const md = await app.inject({ method: 'GET', url: `/links/${id}/content?format=markdown` });
    expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(md.body).toMatch(/^# /m);
    expect(md.headers['etag']).toBe(`"${sha(Buffer.from(md.body))}"`);
  });

  it('names the final URL as stored: its percent escapes are not escaped again', async () => {
    const url = 'https://pages.example/caf%C3%A9%20menu?q=a%20b&x=%C3%BC';
    const id = await storePage(url, HTML, { 'content-type': 'text/html' }, 'text/html');
    const res = await app.inject({ method: 'GET', url: `/links/${id}/content` });
    expect(res.headers['x-crawler-final-url']).toBe(url);
    // Whatever a header cannot carry is percent-encoded as UTF-8, the URL's own escapes left alone.
    const odd = await storePage('https://pages.example/odd', HTML, { 'content-type': 'text/html' }, 'text/html');
    await db.prisma.$executeRawUnsafe(`UPDATE fetched_content SET final_url = 'https://pages.example/é%20x y' WHERE link = $1::uuid`, odd);
    expect((await app.inject({ method: 'GET', url: `/links/${odd}/content` })).headers['x-crawler-final-url']).toBe('https://pages.example/%C3%A9%20x%20y');
  });

  it('keeps links absolute in Markdown', async () => {
    const id = await storePage('https://pages.example/dir/hello', HTML, { 'content-type': 'text/html' }, 'text/html');
    const md = await app.inject({ method: 'GET', url: `/links/${id}/content?format=markdown` });
    expect(md.body).toContain('[link](https://pages.example/next)');
  });

  it('answers 404 JSON for a link without a page, 400 for a bad id or format, 415 for a PDF as Markdown', async () => {
    const [link] = await links.upsertMany([{ url: 'https://pages.example/never', initialUrl: 'https://pages.example/never', domain: 'pages.example' }]);
    const none = await app.inject({ method: 'GET', url: `/links/${link!.id}/content` });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ error: 'no_content', message: `no stored page for link ${link!.id} yet: it is queued` });
    // A failed link says why it has no page; an unknown one says it does not exist.
    const [failed] = await links.upsertMany([{ url: 'https://pages.example/broken', initialUrl: 'https://pages.example/broken', domain: 'pages.example' }]);
    await links.update(failed!.id, { status: 'failed', lastErrorType: 'empty_content', lastError: 'empty_content:playwright' });
    const failedRes = await app.inject({ method: 'GET', url: `/links/${failed!.id}/content` });
    expect(failedRes.json()).toMatchObject({ error: 'no_content', message: expect.stringContaining('failed (empty_content:playwright); no page was stored') });
    const unknown = await app.inject({ method: 'GET', url: '/links/00000000-0000-4000-8000-000000000000/content' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ message: 'no link 00000000-0000-4000-8000-000000000000' });
    expect((await app.inject({ method: 'GET', url: '/links/nope/content' })).statusCode).toBe(400);
    const pdfId = await storePage('https://pages.example/other.pdf', PDF, { 'content-type': 'application/pdf' }, 'application/pdf');
    expect((await app.inject({ method: 'GET', url: `/links/${pdfId}/content?format=docx` })).statusCode).toBe(400);
    const md = await app.inject({ method: 'GET', url: `/links/${pdfId}/content?format=markdown` });
    expect(md.statusCode).toBe(415);
    expect(md.json()).toMatchObject({ error: 'unsupported_format' });
  });
});

describe('GET /export', () => {
  it('streams every stored page as JSON Lines, bodies lossless', async () => {
    const res = await app.inject({ method: 'GET', url: '/export?format=jsonl&domain=pages.example' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/x-ndjson');
    const lines = res.body.trim().split('\n').map((l) => JSON.parse(l) as { url: string; sha256: string; bodyEncoding: string; body: string });
    expect(lines.length).toBeGreaterThanOrEqual(6);
    for (const l of lines) {
      const bytes = l.bodyEncoding === 'base64' ? Buffer.from(l.body, 'base64') : Buffer.from(l.body, 'utf8');
      expect(sha(bytes)).toBe(l.sha256);
    }
    expect(lines.find((l) => l.url.endsWith('/report.pdf'))!.bodyEncoding).toBe('base64');
    expect(lines.find((l) => l.url.endsWith('/index.html'))!.bodyEncoding).toBe('utf8');
  });

  it('filters, and refuses bad filters', async () => {
    const none = await app.inject({ method: 'GET', url: '/export?format=jsonl&since=2999-01-01T00:00:00Z' });
    expect(none.statusCode).toBe(200);
    expect(none.body).toBe('');
    const other = await app.inject({ method: 'GET', url: '/export?domain=elsewhere.example' });
    expect(other.body).toBe('');
    expect((await app.inject({ method: 'GET', url: '/export?format=zip' })).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/export?since=yesterday' })).statusCode).toBe(400);
    // A bare date is its UTC midnight, as crawl export --since reads it.
    expect((await app.inject({ method: 'GET', url: '/export?format=jsonl&since=2999-01-01' })).body).toBe('');
    const all = await app.inject({ method: 'GET', url: '/export?format=jsonl' });
    const sinceDate = await app.inject({ method: 'GET', url: '/export?format=jsonl&since=2000-01-01' });
    expect(sinceDate.statusCode).toBe(200);
    expect(sinceDate.body.length).toBeGreaterThan(0);
    expect(sinceDate.body).toBe(all.body);
    expect((await app.inject({ method: 'GET', url: '/export?domain=not%20a%20host' })).statusCode).toBe(400);
  });

  it('reads the domain filter as links store it: www., upper case, a trailing dot', async () => {
    const all = (await app.inject({ method: 'GET', url: '/export?domain=pages.example' })).body;
    expect(all).not.toBe('');
    for (const domain of ['www.pages.example', 'PAGES.example', 'pages.example.']) {
      const res = await app.inject({ method: 'GET', url: `/export?domain=${encodeURIComponent(domain)}` });
      expect(res.statusCode, domain).toBe(200);
      expect(res.body, domain).toBe(all);
    }
  });
});

describe('GET /export?domain=', () => {
  it('takes the domain as a name, not a pattern: a_b.example is not axb.example', async () => {
    await storePage('https://a_b.example/', HTML, { 'content-type': 'text/html' }, 'text/html');
    await storePage('https://www.a_b.example/sub', HTML, { 'content-type': 'text/html' }, 'text/html');
    await storePage('https://sub.axb.example/', HTML, { 'content-type': 'text/html' }, 'text/html');
    const res = await app.inject({ method: 'GET', url: '/export?domain=a_b.example' });
    const urls = res.body.trim().split('\n').map((l) => (JSON.parse(l) as { url: string }).url);
    expect(urls.sort()).toEqual(['https://a_b.example/', 'https://www.a_b.example/sub']);
  });
});

/** A page whose outcome batch has not committed yet: its id and fetch time are taken, it commits on `commit()`. */
async function storeUncommitted(url: string, fetchedAt: Date): Promise<{ commit: () => Promise<void> }> {
  const [link] = await links.upsertMany([{ url, initialUrl: url, domain: new URL(url).hostname }]);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let inserted!: () => void;
  const ready = new Promise<void>((resolve) => (inserted = resolve));
  const done = db.prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(
      `INSERT INTO fetched_content (link, body, encoding, http_status, final_url, sha256, size_bytes, fetcher, fetched_at)
       VALUES ($1::uuid, convert_to($2, 'UTF8'), 'identity', 200, $2, md5($2), length($2), 'simple_http', $3::timestamptz)`,
      link!.id, url, fetchedAt,
    );
    inserted();
    await held;
  }, { timeout: 120_000 });
  await ready;
  return { commit: async () => { release(); await done; } };
}

describe('GET /export?after=', () => {
  const urls = (body: string) => body.trim().split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { url: string }).url);

  it('resumes from the X-Crawler-Cursor of the last export: a page that committed late is in the next one, and no page is in two', async () => {
    await storePage('https://late.example/a', HTML, { 'content-type': 'text/html' }, 'text/html');
    const first = await app.inject({ method: 'GET', url: '/export?format=jsonl&domain=late.example' });
    expect(urls(first.body)).toEqual(['https://late.example/a']);
    const cursor1 = first.headers['x-crawler-cursor'] as string;
    expect(cursor1).toMatch(/^\d+:\d+:/);

    // Fetched before the next page and given a lower id, but its batch commits after the next export has run.
    const late = await storeUncommitted('https://late.example/b-late', new Date(Date.now() - 60_000));
    await storePage('https://late.example/c', HTML, { 'content-type': 'text/html' }, 'text/html');
    const second = await app.inject({ method: 'GET', url: `/export?format=jsonl&domain=late.example&after=${encodeURIComponent(cursor1)}` });
    expect(second.statusCode).toBe(200);
    expect(urls(second.body)).toEqual(['https://late.example/c']);
    const cursor2 = second.headers['x-crawler-cursor'] as string;

    await late.commit();
    const third = await app.inject({ method: 'GET', url: `/export?format=jsonl&domain=late.example&after=${encodeURIComponent(cursor2)}` });
    expect(urls(third.body)).toEqual(['https://late.example/b-late']);
    const warc = await app.inject({ method: 'GET', url: `/export?format=warc&domain=late.example&after=${encodeURIComponent(cursor2)}` });
    const records = gunzipSync(warc.rawPayload).toString('latin1');
    expect(records.match(/WARC-Target-URI: \S+/g)).toEqual(['WARC-Target-URI: https://late.example/b-late', 'WARC-Target-URI: https://late.example/b-late']);
    expect(records).toContain(`crawler-filter-after: ${cursor2}`);
    expect(records).toContain(`crawler-cursor: ${warc.headers['x-crawler-cursor']}`);

    const fourth = await app.inject({ method: 'GET', url: `/export?format=jsonl&domain=late.example&after=${encodeURIComponent(third.headers['x-crawler-cursor'] as string)}` });
    expect(fourth.body).toBe('');
  });

  it('refuses a cursor no export handed out', async () => {
    for (const after of ['yesterday', '20:10:', '10:20:30']) {
      const res = await app.inject({ method: 'GET', url: `/export?after=${encodeURIComponent(after)}` });
      expect([res.statusCode, res.json().error], after).toEqual([400, 'invalid_query']);
    }
    // Well formed, but from a database whose transactions are far ahead of this one's: resuming would skip everything.
    const ahead = await app.inject({ method: 'GET', url: `/export?after=${encodeURIComponent('999999999999:999999999999:')}` });
    expect([ahead.statusCode, ahead.json().error]).toEqual([409, 'cursor_ahead']);
  });
});

describe('GET /links/:id/versions and ?version=N', () => {
  it('lists every version and answers an older one, the latest by default; unknown versions and bad numbers are named', async () => {
    const url = 'https://pages.example/versions';
    const [link] = await links.upsertMany([{ url, initialUrl: url, domain: 'pages.example' }]);
    const bodies = ['<html><body>one</body></html>', '<html><body>two</body></html>'].map((b) => Buffer.from(b));
    for (const [i, body] of bodies.entries()) {
      await store.save({ linkId: link!.id, body, contentType: 'text/html', httpStatus: 200 + i, finalUrl: url, fetcher: i === 0 ? 'simple_http' : 'playwright', headers: { 'content-type': 'text/html' } });
    }
    const list = await app.inject({ method: 'GET', url: `/links/${link!.id}/versions` });
    expect(list.statusCode).toBe(200);
    expect(list.json().versions.map((v: Record<string, unknown>) => [v.version, v.httpStatus, v.sha256, v.sizeBytes, v.fetcher])).toEqual([
      [1, 200, sha(bodies[0]!), bodies[0]!.byteLength, 'simple_http'],
      [2, 201, sha(bodies[1]!), bodies[1]!.byteLength, 'playwright'],
    ]);
    expect(Date.parse(list.json().versions[0].fetchedAt)).not.toBeNaN();

    const latest = await app.inject({ method: 'GET', url: `/links/${link!.id}/content` });
    expect([latest.body, latest.headers['x-crawler-version']]).toEqual([bodies[1]!.toString(), '2']);
    const older = await app.inject({ method: 'GET', url: `/links/${link!.id}/content?version=1` });
    expect([older.statusCode, older.body, older.headers['x-crawler-version']]).toEqual([200, bodies[0]!.toString(), '1']);
    const missing = await app.inject({ method: 'GET', url: `/links/${link!.id}/content?version=3` });
    expect([missing.statusCode, missing.json().error]).toEqual([404, 'no_version']);
    for (const bad of ['0', '-1', 'abc', '1.5']) {
      const res = await app.inject({ method: 'GET', url: `/links/${link!.id}/content?version=${bad}` });
      expect([res.statusCode, res.json().message], bad).toEqual([400, expect.stringContaining('version')]);
    }
    const unknown = await app.inject({ method: 'GET', url: '/links/00000000-0000-4000-8000-000000000000/versions' });
    expect(unknown.statusCode).toBe(404);
  });
});
