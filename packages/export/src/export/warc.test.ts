/** WARC records of single pages, checked byte for byte and read back by warcio. */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { WARCParser } from 'warcio';
import { decodeWindows1252 } from '@crawler/core';
import type { ExportedPage, ExportedRevisit } from '@crawler/db';
import { pageRecords, revisitRecords } from './warc.js';

const body = Buffer.from('<html><body><p>page</p></body></html>');
// A header value as a server sent it: raw UTF-8 octets (RFC 9110 leaves them opaque), here a file name.
const wire = Buffer.from('inline; filename="café-日本.html"', 'utf8');
// What the fetchers store for those octets: plain HTTP (undici) reads each octet as one latin1 character; Chromium
// (the browser fetchers) as windows-1252, so 0x97 and 0x9C come out as '—' and 'œ', not U+0097 and U+009C.
const asLatin1 = wire.toString('latin1');
const asWindows1252 = decodeWindows1252(wire);

const page = (disposition: string): ExportedPage => ({
  id: 7n, linkId: '0f8fad5b-d9cb-469f-a165-70867728950e', url: 'https://h.example/a', linkStatus: 'done', finalUrl: 'https://h.example/a',
  httpStatus: 200, contentType: 'text/html', headers: { 'content-type': 'text/html; charset=utf-8', 'content-disposition': disposition },
  fetcher: 'playwright', fetchedAt: new Date('2026-05-01T00:00:00Z'), sha256: 'a'.repeat(64), sizeBytes: body.byteLength, version: 1, body,
});

async function firstRecordHeader(warc: Buffer, name: string): Promise<string | null> {
  for await (const record of new WARCParser([warc])) {
    await record.readFully(false);
    return record.httpHeaders?.headers.get(name) ?? null;
  }
  return null;
}

describe('WARC header blocks', () => {
  it('carry a header value as the octets the server sent, whichever fetcher stored it', async () => {
    expect(asWindows1252).not.toBe(asLatin1);
    for (const stored of [asLatin1, asWindows1252]) {
      const block = gunzipSync(pageRecords(page(stored)));
      expect(block.includes(Buffer.concat([Buffer.from('content-disposition: '), wire, Buffer.from('\r\n')])), JSON.stringify(stored)).toBe(true);
      // warcio reads each octet of a header block as one character: the same octets come back.
      expect(await firstRecordHeader(pageRecords(page(stored)), 'content-disposition')).toBe(asLatin1);
    }
  });

  it('carry a revisit\'s header values as the octets the server sent', () => {
    const revisit: ExportedRevisit = {
      visitId: 9n, kind: 'identical', linkId: '0f8fad5b-d9cb-469f-a165-70867728950e', url: 'https://h.example/a', linkStatus: 'done',
      finalUrl: 'https://h.example/a', httpStatus: 200, headers: { 'content-disposition': asWindows1252 }, fetcher: 'playwright',
      visitedAt: new Date('2026-05-02T00:00:00Z'),
      refersTo: { contentId: 7n, version: 1, finalUrl: 'https://h.example/a', fetchedAt: new Date('2026-05-01T00:00:00Z'), sha256: 'a'.repeat(64) },
    };
    expect(gunzipSync(revisitRecords(revisit)).includes(Buffer.concat([Buffer.from('content-disposition: '), wire]))).toBe(true);
  });

  it('write a value that holds characters no single octet decodes to (set by hand, or by a later fetcher) as UTF-8', () => {
    const block = gunzipSync(pageRecords(page('inline; filename="☃.html"')));
    expect(block.includes(Buffer.from('filename="☃.html"', 'utf8'))).toBe(true);
  });
});
