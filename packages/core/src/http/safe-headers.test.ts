import { describe, expect, it } from 'vitest';
import { MAX_ARCHIVED_HEADER_VALUE_LENGTH, MAX_ARCHIVED_HEADERS, MAX_SAFE_HEADER_VALUE_LENGTH, archivedResponseHeaders, safeResponseHeaders } from './safe-headers.js';

describe('safeResponseHeaders', () => {
  it('keeps the allow-listed diagnostic headers, lower-cased', () => {
    const out = safeResponseHeaders({ Server: 'cloudflare', 'CF-Ray': 'abc', 'content-type': 'text/html', 'retry-after': '30', 'x-datadome': 'protected' });
    expect(out).toEqual({ server: 'cloudflare', 'cf-ray': 'abc', 'content-type': 'text/html', 'retry-after': '30', 'x-datadome': 'protected' });
  });
  it('drops cookies, auth and anything unknown', () => {
    const out = safeResponseHeaders({ 'set-cookie': 'sid=1', cookie: 'a=b', authorization: 'Bearer x', 'www-authenticate': 'Basic', 'proxy-authorization': 'x', 'x-user-email': 'a@b.c' });
    expect(out).toEqual({});
  });
  it('truncates long values', () => {
    expect(safeResponseHeaders({ via: 'v'.repeat(2000) }).via).toHaveLength(MAX_SAFE_HEADER_VALUE_LENGTH);
  });
});

describe('archivedResponseHeaders', () => {
  it('keeps every header but cookies, lower-cased', () => {
    const out = archivedResponseHeaders({ 'Content-Type': 'text/html; charset=iso-8859-1', ETag: '"x"', 'Set-Cookie': 'sid=1', 'x-custom': 'a' });
    expect(out).toEqual({ 'content-type': 'text/html; charset=iso-8859-1', etag: '"x"', 'x-custom': 'a' });
  });
  it('cannot forge a header line or a bad name', () => {
    const out = archivedResponseHeaders({ 'x-a': 'one\r\nx-evil: 1', 'bad name': 'v' });
    expect(out).toEqual({ 'x-a': 'one x-evil: 1' });
  });
  it('bounds values and count', () => {
    expect(archivedResponseHeaders({ via: 'v'.repeat(20_000) }).via).toHaveLength(MAX_ARCHIVED_HEADER_VALUE_LENGTH);
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`x-h${i}`, 'v']));
    expect(Object.keys(archivedResponseHeaders(many))).toHaveLength(MAX_ARCHIVED_HEADERS);
  });
});
