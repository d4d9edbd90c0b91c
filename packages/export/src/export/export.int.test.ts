/** Exports of real stored pages, read back by a third-party WARC reader (warcio, Webrecorder's). */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WARCParser } from 'warcio';
import { ContentStore, sqlOf } from '@crawler/db';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { exportPages } from './export-pages.js';
import { base32 } from './warc.js';

let db: TestDatabase;
const stored = new Map<string, { body: Buffer; contentType: string }>();

function pageBody(i: number): { body: Buffer; contentType: string } {
  if (i % 10 === 3) return { body: Buffer.concat([Buffer.from(`%PDF-1.4\n%\xe2\xe3\xcf\xd3\n${i}\n`, 'latin1'), Buffer.from(Array.from({ length: 256 }, (_, k) => (k * 7 + i) & 0xff))]), contentType: 'application/pdf' };
  if (i % 10 === 7) return { body: Buffer.from(`<html><body><p>Caf\xe9 n\xb0${i} \x80</p></body></html>`, 'latin1'), contentType: 'text/html; charset=windows-1252' };
  // CRLFs and a line that looks like a WARC header inside the body: the reader must trust Content-Length, not lines.
  return { body: Buffer.from(`<!doctype html><html><body><h1>Page ${i}</h1>\r\n\r\nWARC/1.1\r\nWARC-Type: response\r\n${'x'.repeat(i * 37)}</body></html>`), contentType: 'text/html; charset=utf-8' };
}

beforeAll(async () => {
  db = await createTestDatabase('export_warc');
  const urls = Array.from({ length: 100 }, (_, i) => `https://site${i % 4}.example/p/${i}?q=${i}`);
  const rows = await sqlOf(db.prisma).query<{ id: string; url: string }>(
    "INSERT INTO links (url, initial_url, domain, status) SELECT u, u, split_part(split_part(u, '/', 3), ':', 1), 'queued' FROM unnest($1::text[]) u RETURNING id::text, url",
    [urls],
  );
  const store = new ContentStore({ prisma: db.prisma });
  for (const [i, row] of rows.entries()) {
    const page = pageBody(Number(row.url.split('/p/')[1]!.split('?')[0]));
    stored.set(row.url, page);
    await store.saveAndComplete({
      linkId: row.id, body: page.body, contentType: page.contentType.split(';')[0]!, httpStatus: i === 5 ? 203 : 200, finalUrl: row.url, fetcher: 'simple_http',
      headers: { 'content-type': page.contentType, 'content-encoding': 'br', 'transfer-encoding': 'chunked', server: 'nginx', etag: `"v${i}"` },
    });
  }
});

afterAll(async () => {
  await db?.drop();
});

async function collect(gen: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of gen) parts.push(chunk);
  return Buffer.concat(parts);
}

describe('WARC export', () => {
  it('reads back with warcio: a warcinfo, 100 responses with their payloads and digests, 100 requests', async () => {
    const warc = await collect(exportPages(db.prisma, { format: 'warc', pageSize: 7 }));
    // One gzip member per record: 1 + 2 × 100 member headers.
    let members = 0;
    for (let k = warc.indexOf(Buffer.from([0x1f, 0x8b, 0x08])); k !== -1; k = warc.indexOf(Buffer.from([0x1f, 0x8b, 0x08]), k + 1)) members += 1;
    expect(members).toBeGreaterThanOrEqual(201);

    const types: string[] = [];
    const responseIds = new Set<string>();
    const concurrent: string[] = [];
    let checked = 0;
    for await (const record of WARCParser.iterRecords(Readable.from([warc]))) {
      types.push(record.warcType);
      expect(record.warcHeaders.protocol).toBe('WARC/1.1');
      expect(record.warcDate).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      if (record.warcType === 'warcinfo') {
        expect(await record.contentText()).toContain('WARC File Format 1.1');
        continue;
      }
      const uri = record.warcTargetURI!;
      const page = stored.get(uri);
      expect(page, uri).toBeDefined();
      if (record.warcType === 'request') {
        concurrent.push(...(record.warcConcurrentTo ?? []));
        expect(record.httpHeaders?.statusline).toMatch(/^GET \/p\/\d+\?q=\d+ HTTP\/1\.1$/);
        await record.readFully(false);
        continue;
      }
      responseIds.add(record.warcHeader('WARC-Record-ID')!);
      const info = record.getResponseInfo()!;
      expect([200, 203]).toContain(Number(info.status));
      expect(info.headers.get('content-type')).toBe(page!.contentType);
      expect(info.headers.get('server')).toBe('nginx');
      // The body is stored decoded: the wire's encodings are gone, the length is the body's.
      expect(info.headers.get('content-encoding')).toBeNull();
      expect(info.headers.get('transfer-encoding')).toBeNull();
      expect(info.headers.get('content-length')).toBe(String(page!.body.byteLength));
      const payload = Buffer.from(await record.readFully(false));
      expect(Buffer.compare(payload, page!.body)).toBe(0);
      expect(record.warcPayloadDigest).toBe(`sha256:${base32(createHash('sha256').update(payload).digest())}`);
      checked += 1;
    }
    expect(types[0]).toBe('warcinfo');
    expect(types.filter((t) => t === 'response')).toHaveLength(100);
    expect(types.filter((t) => t === 'request')).toHaveLength(100);
    expect(checked).toBe(100);
    // Every request record points at its response.
    expect(concurrent.every((id) => responseIds.has(id))).toBe(true);
    expect(concurrent).toHaveLength(100);
  });

  it('filters by domain and link status', async () => {
    const warc = await collect(exportPages(db.prisma, { format: 'warc', domain: 'site1.example', linkStatus: 'done' }));
    let responses = 0;
    for await (const record of WARCParser.iterRecords(Readable.from([warc]))) {
      if (record.warcType !== 'response') continue;
      expect(record.warcTargetURI).toMatch(/^https:\/\/site1\.example\//);
      responses += 1;
    }
    expect(responses).toBe(25);
    expect(await collect(exportPages(db.prisma, { format: 'jsonl', linkStatus: 'failed' }))).toHaveLength(0);
  });
});

describe('base32', () => {
  it('matches RFC 4648 test vectors', () => {
    for (const [input, out] of [['', ''], ['f', 'MY======'], ['fo', 'MZXQ===='], ['foo', 'MZXW6==='], ['foob', 'MZXW6YQ='], ['fooba', 'MZXW6YTB'], ['foobar', 'MZXW6YTBOI======']]) {
      expect(base32(Buffer.from(input!))).toBe(out);
    }
  });
});
