import { describe, expect, it } from 'vitest';
import { acceptEncodingFor, browserLikeHeaders } from './browser-headers.js';

const chrome = (major: number) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;

describe('browser-like request headers', () => {
  it('offers the codings the Chrome it names offers, in its order: zstd from Chrome 123 on', () => {
    expect(browserLikeHeaders(chrome(138))['accept-encoding']).toBe('gzip, deflate, br, zstd');
    expect(browserLikeHeaders(chrome(123))['accept-encoding']).toBe('gzip, deflate, br, zstd');
    expect(browserLikeHeaders(chrome(122))['accept-encoding']).toBe('gzip, deflate, br');
    // A user agent that names no Chrome gets the default one's headers.
    expect(browserLikeHeaders('curl/8.5.0')['accept-encoding']).toBe('gzip, deflate, br, zstd');
  });

  it('gives client hints that agree with the user agent', () => {
    expect(browserLikeHeaders(chrome(131))).toMatchObject({ 'sec-ch-ua': expect.stringContaining('"Chromium";v="131"'), 'sec-ch-ua-platform': '"Windows"' });
  });

  it("offers brotli and zstd where Chrome does: over https and to localhost, not to another http:// origin", () => {
    const full = 'gzip, deflate, br, zstd';
    expect(acceptEncodingFor(new URL('https://example.com/'), full)).toBe(full);
    expect(acceptEncodingFor(new URL('http://example.com/'), full)).toBe('gzip, deflate');
    expect(acceptEncodingFor(new URL('http://10.0.0.5/'), full)).toBe('gzip, deflate');
    for (const local of ['http://localhost:3000/', 'http://app.localhost/', 'http://127.0.0.10/', 'http://[::1]/']) expect(acceptEncodingFor(new URL(local), full)).toBe(full);
  });
});
