import { describe, expect, it } from 'vitest';
import { revisitValidators, usableLastModified } from './revisit-validators.js';

const at = new Date('2026-06-01T12:00:00Z');
const DATE = 'Mon, 01 Jun 2026 12:00:00 GMT';

describe('usableLastModified', () => {
  it('keeps a Last-Modified at or before the response that carried it, exactly as sent', () => {
    expect(usableLastModified({ lastModified: 'Sun, 31 May 2026 08:00:00 GMT', date: DATE, receivedAt: at })).toBe('Sun, 31 May 2026 08:00:00 GMT');
    expect(usableLastModified({ lastModified: DATE, date: DATE, receivedAt: at })).toBe(DATE);
  });

  it('drops one later than the response Date (a wrong server clock), or later than its receipt without a Date', () => {
    expect(usableLastModified({ lastModified: 'Tue, 01 Jun 2027 12:00:00 GMT', date: DATE, receivedAt: at })).toBeNull();
    expect(usableLastModified({ lastModified: 'Mon, 01 Jun 2026 12:00:01 GMT', date: DATE, receivedAt: new Date('2026-06-02T00:00:00Z') })).toBeNull();
    expect(usableLastModified({ lastModified: 'Mon, 01 Jun 2026 13:00:00 GMT', date: null, receivedAt: at })).toBeNull();
    expect(usableLastModified({ lastModified: 'Mon, 01 Jun 2026 13:00:00 GMT', date: 'not a date', receivedAt: at })).toBeNull();
  });

  it('drops one that is no date, and none is none', () => {
    expect(usableLastModified({ lastModified: 'yesterday, more or less', date: DATE, receivedAt: at })).toBeNull();
    expect(usableLastModified({ lastModified: null, date: DATE, receivedAt: at })).toBeNull();
    expect(usableLastModified({ lastModified: '', date: DATE, receivedAt: at })).toBeNull();
  });
});

describe('revisitValidators', () => {
  const old = { etag: '"old"', lastModified: 'Sun, 31 May 2026 08:00:00 GMT', date: DATE, receivedAt: at };

  it('takes each validator from the newest response that has a usable one', () => {
    expect(revisitValidators([{ etag: '"new"', lastModified: null, date: DATE, receivedAt: at }, old])).toEqual({ etag: '"new"', lastModified: old.lastModified });
    expect(revisitValidators([{ etag: null, lastModified: 'Tue, 01 Jun 2027 12:00:00 GMT', date: DATE, receivedAt: at }, old])).toEqual({ etag: '"old"', lastModified: old.lastModified });
    expect(revisitValidators([old])).toEqual({ etag: '"old"', lastModified: old.lastModified });
  });

  it('keeps weak and unquoted ETags as the server wrote them, and none is none', () => {
    expect(revisitValidators([{ ...old, etag: 'W/"x"' }]).etag).toBe('W/"x"');
    expect(revisitValidators([{ ...old, etag: 'abc123' }]).etag).toBe('abc123');
    expect(revisitValidators([{ ...old, etag: '  ' }]).etag).toBeNull();
    expect(revisitValidators([])).toEqual({ etag: null, lastModified: null });
  });
});
