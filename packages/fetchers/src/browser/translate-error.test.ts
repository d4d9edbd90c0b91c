import { beforeAll, describe, expect, it } from 'vitest';
import { errors } from 'playwright-core';
import { translatePlaywrightError } from './translate-error.js';
import { loadPlaywright } from './playwright-module.js';
import { translateUndiciError } from '../http/translate-error.js';
import { FetchError } from '../errors.js';

const ctx = () => ({ url: 'http://a.test/', fetcher: 'playwright', signal: new AbortController().signal });

// A Playwright error only exists once the pool has loaded Playwright, as here.
beforeAll(async () => {
  await loadPlaywright();
});

describe('translatePlaywrightError', () => {
  it.each([
    ['page.goto: net::ERR_NAME_NOT_RESOLVED at http://a.test/', 'dns_error', true],
    ['page.goto: net::ERR_CONNECTION_REFUSED at http://a.test/', 'network_error', true],
    ['page.goto: net::ERR_CONNECTION_RESET at http://a.test/', 'network_error', true],
    ['page.goto: net::ERR_CERT_AUTHORITY_INVALID at https://a.test/', 'tls_error', false],
    ['page.goto: net::ERR_TOO_MANY_REDIRECTS at http://a.test/', 'too_many_redirects', false],
    ['page.goto: net::ERR_UNSAFE_REDIRECT at http://a.test/to-file', 'blocked_scheme', false],
    ['page.goto: Download is starting', 'wrong_tool', true],
    ['page.goto: Target page, context or browser has been closed', 'browser_error', true],
    ['something nobody expected', 'browser_error', true],
  ])('%s → %s', (message, code, retryable) => {
    const e = translatePlaywrightError(new Error(message), ctx());
    expect(e?.code).toBe(code);
    expect(e?.retryable).toBe(retryable);
    expect(e?.message).not.toContain('\n');
  });

  it('maps Playwright TimeoutError to timeout', () => {
    expect(translatePlaywrightError(new errors.TimeoutError('page.goto: Timeout 100ms exceeded.'), ctx())?.code).toBe('timeout');
  });

  it('leaves deadline and caller aborts to the base', () => {
    const ac = new AbortController();
    ac.abort();
    expect(translatePlaywrightError(new Error('net::ERR_ABORTED'), { ...ctx(), signal: ac.signal })).toBeNull();
  });
});

describe('translateUndiciError', () => {
  const withCode = (code: string, cause?: unknown) => Object.assign(new Error(code), { code, cause });

  it.each([
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
    ['UND_ERR_SOCKET', 'network_error'],
    ['ECONNREFUSED', 'network_error'],
    ['ENOTFOUND', 'dns_error'],
    ['CERT_HAS_EXPIRED', 'tls_error'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls_error'],
    ['HPE_INVALID_CONSTANT', 'protocol_error'],
  ])('%s → %s', (code, expected) => {
    expect(translateUndiciError(withCode(code), ctx())?.code).toBe(expected);
  });

  it('finds a FetchError or a code in the cause chain', () => {
    const refused = new FetchError('blocked_address', 'no');
    expect(translateUndiciError(new Error('wrapped', { cause: refused }), ctx())).toBe(refused);
    expect(translateUndiciError(new Error('outer', { cause: withCode('ECONNRESET') }), ctx())?.code).toBe('network_error');
    expect(translateUndiciError(new Error('plain'), ctx())).toBeNull();
  });
});
