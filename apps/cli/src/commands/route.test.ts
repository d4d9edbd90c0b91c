import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError, type CommandIO } from '../command.js';
import route, { validateDomain, validateFetcherName } from './route.js';

describe('validateFetcherName', () => {
  it('accepts the known fetchers and maps the direct_access alias onto simple_http', () => {
    expect(validateFetcherName('playwright')).toBe('playwright');
    expect(validateFetcherName('Playwright_Stealth')).toBe('playwright_stealth');
    expect(validateFetcherName('direct_access')).toBe('simple_http');
  });
  it('rejects an unknown fetcher, listing the valid names', () => {
    expect(() => validateFetcherName('curl')).toThrow(UsageError);
    expect(() => validateFetcherName('curl')).toThrow(/simple_http, playwright, playwright_stealth/);
  });
});

describe('validateDomain', () => {
  it('lower-cases a host name and rejects URLs, ports and paths', () => {
    expect(validateDomain('Shop.Example.COM')).toBe('shop.example.com');
    for (const bad of ['https://a.example', 'a.example:8080', 'a.example/x', '', '-a.example']) expect(() => validateDomain(bad), bad).toThrow(UsageError);
  });
});

describe('crawl route (arguments)', () => {
  // No DATABASE_URL at all: every one of these must fail on its arguments before touching a database.
  const io: CommandIO = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
  it.each([[[]], [['set', 'a.example']], [['set', 'a.example', 'wget']], [['delete']], [['list', 'extra']], [['frobnicate']]])('rejects %j with a usage error', async (args) => {
    await expect(route.run(args, io)).rejects.toThrow(UsageError);
  });
});
