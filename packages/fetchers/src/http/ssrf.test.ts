import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redirect, startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { createHttpFetcher, type HttpFetcher } from './http-fetcher.js';
import { AddressRefusedError, blockedRangeOf, REFUSED_MESSAGE } from './ssrf.js';
import { FetchError } from '../errors.js';

async function failure(p: Promise<unknown>): Promise<FetchError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FetchError);
  return err as FetchError;
}

describe('blockedRangeOf', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    // IPv6 forms that carry an IPv4 address are judged by the address they carry.
    ['::7f00:1', 'loopback'],
    ['::a9fe:a9fe', 'linkLocal'],
    ['::ffff:0:a00:1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::', 'private'],
    ['2001:0:7f00:1::1', 'loopback'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    ['64:ff9b:1::808:808', 'reserved'],
    ['::', 'unspecified'],
  ])('refuses %s (%s)', (ip, range) => {
    expect(blockedRangeOf(ip)).toBe(range);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '64:ff9b::808:808', '2002:808:808::1', '::ffff:8.8.8.8'])('lets public %s through', (ip) => {
    expect(blockedRangeOf(ip)).toBeNull();
  });
});

describe('SSRF guard (on by default)', () => {
  let publicLike: TestServer;
  let guarded: HttpFetcher;

  beforeAll(async () => {
    // Allow-listing 127.0.0.2 plays the "public site" that tries to bounce us into private space.
    publicLike = await startTestServer(
      {
        '/': { body: staticArticle() },
        '/to-loopback': redirect('http://127.0.0.1:9/admin'),
        '/to-metadata': redirect('http://169.254.169.254/latest/meta-data/'),
        '/to-localhost': redirect('http://localhost:9/'),
        '/to-file': redirect('file:///etc/passwd'),
      },
      { host: '127.0.0.2' },
    );
    guarded = createHttpFetcher({ allowHosts: ['127.0.0.2'] });
  });

  afterAll(async () => {
    await guarded.close();
    await publicLike.close();
  });

  it('fetches an allow-listed host', async () => {
    expect((await guarded.fetch({ url: publicLike.url('/') })).status).toBe(200);
  });

  it('refuses loopback and private literals up front', async () => {
    for (const url of ['http://127.0.0.1:9/', 'http://[::1]:9/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/']) {
      const err = await failure(guarded.fetch({ url }));
      expect(err.code).toBe('blocked_address');
      expect(err.retryable).toBe(false);
    }
  });

  it('refuses a redirect into private space on every hop', async () => {
    expect((await failure(guarded.fetch({ url: publicLike.url('/to-loopback') }))).code).toBe('blocked_address');
    expect((await failure(guarded.fetch({ url: publicLike.url('/to-metadata') }))).code).toBe('blocked_address');
    expect((await failure(guarded.fetch({ url: publicLike.url('/to-file') }))).code).toBe('blocked_scheme');
    // Only the allow-listed hop reached a server: the private targets were never contacted.
    expect(publicLike.hits('/to-loopback')).toBe(1);
  });

  it('refuses a NAME that resolves to loopback at connect time (the rebinding path)', async () => {
    const err = await failure(guarded.fetch({ url: publicLike.url('/to-localhost') }));
    expect(err.code).toBe('blocked_address');
    // What is stored and served says only "not public"; where the name points goes to the log.
    expect(err.message).toBe(REFUSED_MESSAGE);
    expect((err as AddressRefusedError).detail).toMatch(/^localhost resolves to (127\.0\.0\.1|::1) \(loopback\)$/);
  });

  it.each(['file:///etc/passwd', 'data:text/html,<h1>x</h1>', 'javascript:alert(1)', 'ftp://example.com/x', 'gopher://x/'])(
    'refuses the %s scheme before any I/O',
    async (url) => {
      const err = await failure(guarded.fetch({ url }));
      expect(err.code).toBe('blocked_scheme');
    },
  );

  it('calls an unparsable URL invalid_url', async () => {
    expect((await failure(guarded.fetch({ url: 'not a url' }))).code).toBe('invalid_url');
  });
});
