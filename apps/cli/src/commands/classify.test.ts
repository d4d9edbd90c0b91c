import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError, type CommandIO } from '../command.js';
import command, { parseClassifyArgs } from './classify.js';

function io(stdinText: string | Buffer): { io: CommandIO; out: () => string } {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  return {
    io: { stdin: Readable.from([Buffer.from(stdinText)]), stdout, stderr: new PassThrough(), env: {} },
    out: () => Buffer.concat(chunks).toString('utf8'),
  };
}

const article = `<html><head><title>Notes</title></head><body><article>${'A sentence with real words in it. '.repeat(30)}</article></body></html>`;

describe('crawl classify', () => {
  it('prints validation, heuristics and the probe decision for a static page', async () => {
    const t = io(article);
    expect(await command.run(['--json', '--url', 'https://WWW.Example.com/docs/a.html#x', '--header', 'Server: nginx/1.25', '--header', 'Content-Type: text/html'], t.io)).toBe(0);
    const out = JSON.parse(t.out());
    expect(out.url).toBe('https://www.example.com/docs/a.html');
    expect(out.validation).toMatchObject({ isBlocked: false, hasSpa: false, isEmpty: false, contentFamily: 'html' });
    expect(out.probe).toEqual({ fetcher: 'simple_http', reuse: true, reason: 'static_html' });
    expect(out.responseHeuristics).toContainEqual({ type: 'server_nginx', value: 'true' });
    expect(out.responseHeuristics).toContainEqual({ type: 'status_200', value: 'true' });
    expect(out.urlHeuristics).toContainEqual({ type: 'domain', value: 'example.com' });
    expect(out.urlHeuristics).toContainEqual({ type: 'suffix', value: '.html' });
  });

  it('recognises a challenge from status, headers and body', async () => {
    const t = io('<html><head><title>Just a moment...</title></head><body><script>window._cf_chl_opt={}</script></body></html>');
    expect(await command.run(['--json', '--status', '403', '--header', 'server: cloudflare', '--header', 'content-type: text/html'], t.io)).toBe(0);
    const out = JSON.parse(t.out());
    expect(out.validation).toMatchObject({ isBlocked: true, blockType: 'blocked_captcha', blockVendor: 'cloudflare' });
    expect(out.probe).toEqual({ fetcher: 'playwright_stealth', reuse: false, reason: 'blocked_captcha' });
    expect(out.urlHeuristics).toBeUndefined();
  });

  it("names the challenge's kind, in the text and in --json: what a browser would do with the page", async () => {
    const blocked = '<html><head><title>Attention Required! | Cloudflare</title></head><body><h1>Sorry, you have been blocked</h1><p>You are unable to access example.com</p><p>Cloudflare Ray ID: 8a1b2c3d4e5f6a7b</p></body></html>';
    const asJson = io(blocked);
    expect(await command.run(['--json', '--status', '403', '--header', 'server: cloudflare'], asJson.io)).toBe(0);
    expect(JSON.parse(asJson.out()).challenge).toEqual({ isChallenge: true, vendor: 'cloudflare', kind: 'refusal' });
    const asText = io(blocked);
    expect(await command.run(['--status', '403', '--header', 'server: cloudflare'], asText.io)).toBe(0);
    expect(asText.out()).toMatch(/^challenge +cloudflare, kind refusal/m);
    expect(asText.out()).toMatch(/^blocked +yes: blocked_captcha/m);
    expect(asText.out()).toMatch(/^probe +playwright_stealth/m);

    const plain = io(article);
    expect(await command.run(['--json'], plain.io)).toBe(0);
    expect(JSON.parse(plain.out()).challenge).toEqual({ isChallenge: false, vendor: null, kind: null });
    const plainText = io(article);
    expect(await command.run([], plainText.io)).toBe(0);
    expect(plainText.out()).toMatch(/^challenge +none/m);
    expect(plainText.out()).toMatch(/^blocked +no/m);
  });

  it('sends an SPA shell to playwright', async () => {
    const t = io('<!doctype html><html><body><div id="root"></div><script src="/assets/index.js"></script></body></html>');
    expect(await command.run(['--json'], t.io)).toBe(0);
    expect(JSON.parse(t.out()).probe).toEqual({ fetcher: 'playwright', reuse: false, reason: 'spa_shell' });
  });

  it('rejects bad arguments with a UsageError that names them', async () => {
    const cases: [string[], RegExp][] = [
      [['--status', 'abc'], /--status/],
      [['--status', '99'], /--status/],
      [['--header', 'no colon here'], /--header/],
      [['--header', ': empty name'], /--header/],
      [['--url', 'ftp://example.com/x'], /--url/],
      [['--bogus'], /bogus/],
      [['positional'], /positional|Unexpected argument/i],
    ];
    for (const [args, re] of cases) {
      await expect(command.run(args, io('').io)).rejects.toThrow(UsageError);
      await expect(command.run(args, io('').io)).rejects.toThrow(re);
    }
  });

  it('refuses to wait on an interactive terminal', async () => {
    const t = io('');
    (t.io.stdin as { isTTY?: boolean }).isTTY = true;
    await expect(command.run([], t.io)).rejects.toThrow(/stdin/);
  });

  it('joins repeated headers and lower-cases names', () => {
    expect(parseClassifyArgs(['--header', 'Via: a', '--header', 'VIA: b']).headers).toEqual({ via: 'a, b' });
    expect(parseClassifyArgs([]).status).toBe(200);
  });

  it('prints usage for --help', async () => {
    const t = io('');
    expect(await command.run(['--help'], t.io)).toBe(0);
    expect(t.out()).toMatch(/usage: crawl classify/);
  });
});
