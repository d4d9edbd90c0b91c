import { Readable, PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { collectUrls, configFrom, reportingConfigFrom, urlParts } from './cli-context.js';

const io = (env: Record<string, string>) => ({ stdin: Readable.from([]), stdout: new PassThrough(), stderr: new PassThrough(), env });
const DB = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x' };

describe('reportingConfigFrom', () => {
  it('logs warnings only by default, where the workers log info', () => {
    expect(reportingConfigFrom(io(DB)).logLevel).toBe('warn');
    expect(configFrom(io(DB)).logLevel).toBe('info');
  });

  it('lets LOG_LEVEL from the environment win', () => {
    expect(reportingConfigFrom(io({ ...DB, LOG_LEVEL: 'debug' })).logLevel).toBe('debug');
    expect(reportingConfigFrom(io({ ...DB, LOG_LEVEL: 'info' })).logLevel).toBe('info');
  });
});

describe('URLs from a producer\'s list', () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `https://h${i % 97}.example/p/${i}`);
  const stdinOf = (text: string) => ({ ...io(DB), stdin: Readable.from([text]) });

  it('collectUrls takes a list of 300,000 lines (a spread of it overflowed the call stack)', async () => {
    const urls = await collectUrls(stdinOf(`${lines(300_000).join('\n')}\n`), { urls: [], files: [], stdinWhenEmpty: true });
    expect(urls).toHaveLength(300_000);
  });

  it('urlParts gives arguments, then the lines of stdin, in parts of at most the size asked, comments and blanks left out', async () => {
    const text = `# seeds\n${lines(12_001).join('\n')}\n\n  \n`;
    const sizes: number[] = [];
    let first = '';
    for await (const part of urlParts(stdinOf(text), { urls: [], files: [], stdinWhenEmpty: true }, 5_000)) {
      first ||= part[0]!;
      sizes.push(part.length);
    }
    expect([sizes, first]).toEqual([[5_000, 5_000, 2_001], 'https://h0.example/p/0']);
    const withArgs: string[][] = [];
    for await (const part of urlParts(stdinOf('https://ignored.example/\n'), { urls: ['https://a.example/', 'https://b.example/'], files: [], stdinWhenEmpty: true }, 5)) withArgs.push(part);
    expect(withArgs).toEqual([['https://a.example/', 'https://b.example/']]);
  });

  it('urlParts says which file it cannot read', async () => {
    const parts = urlParts(io(DB), { urls: [], files: ['/nonexistent/seeds.txt'], stdinWhenEmpty: true }, 10);
    await expect(parts.next()).rejects.toThrow(/cannot read \/nonexistent\/seeds.txt/);
  });
});
