import { describe, expect, it } from 'vitest';
import type { ExportedPage } from '@crawler/db';
import { jsonlLine } from './jsonl.js';

const page = (body: Uint8Array, contentType: string): ExportedPage => ({
  id: 1n, linkId: '0f8fad5b-d9cb-469f-a165-70867728950e', url: 'https://c.example/', linkStatus: 'done', finalUrl: 'https://c.example/',
  httpStatus: 200, contentType: contentType.split(';')[0]!, headers: { 'content-type': contentType }, fetcher: 'simple_http',
  fetchedAt: new Date('2026-05-01T00:00:00Z'), sha256: 'a'.repeat(64), sizeBytes: body.byteLength, version: 1, body,
});
const line = (p: ExportedPage) => JSON.parse(jsonlLine(p)) as { body: string; bodyEncoding: string; charset: string | null };

describe('jsonlLine', () => {
  it('names the charset a page in a legacy charset is in, when only its markup declares it', () => {
    // Привет in windows-1251, declared by <meta charset> alone, as many older sites do.
    const bytes = Buffer.concat([Buffer.from('<html><head><meta charset="windows-1251"></head><body><p>'), Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]), Buffer.from('</p></body></html>')]);
    const out = line(page(bytes, 'text/html'));
    expect(out.bodyEncoding).toBe('base64');
    expect(out.charset).toBe('windows-1251');
    expect(new TextDecoder(out.charset!).decode(Buffer.from(out.body, 'base64'))).toContain('Привет');
  });

  it('names the charset of the Content-Type, a BOM\'s, UTF-8 by default, and none for a body that is not text', () => {
    expect(line(page(Buffer.from([0x93, 0xfa, 0x96, 0x7b]), 'text/html; charset=Shift_JIS')).charset).toBe('shift_jis');
    expect(line(page(Buffer.from([0xff, 0xfe, 0x41, 0x00]), 'text/plain')).charset).toBe('utf-16le');
    expect(line(page(Buffer.from('<p>plain</p>'), 'text/html')).charset).toBe('utf-8');
    expect(line(page(Buffer.from('%PDF-1.4\n%\xe2\xe3', 'latin1'), 'application/pdf')).charset).toBeNull();
  });

  it('writes NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR escaped: a line reader that splits on them (Python\'s splitlines) still reads one line', () => {
    const text = 'before\u2028middle\u2029after\u0085end';
    const p = { ...page(Buffer.from(`<p>${text}</p>`), 'text/html; charset=utf-8'), url: 'https://c.example/\u2028' };
    const raw = jsonlLine(p);
    expect(raw.slice(0, -1)).not.toMatch(/[\n\r\u0085\u2028\u2029]/);
    expect(raw).toContain('\\u2028');
    expect(JSON.parse(raw)).toMatchObject({ body: `<p>${text}</p>`, url: 'https://c.example/\u2028' });
  });
});
