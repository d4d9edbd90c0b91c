import { describe, expect, it } from 'vitest';
import { MAX_SAFE_HEADER_VALUE_LENGTH, safeResponseHeaders } from './safe-headers.js';

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
