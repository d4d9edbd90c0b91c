import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from './commands/index.js';
import { runCli, wantsHelp } from './cli.js';

function capture() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const o: Buffer[] = [];
  const e: Buffer[] = [];
  stdout.on('data', (c: Buffer) => o.push(c));
  stderr.on('data', (c: Buffer) => e.push(c));
  return {
    // No DATABASE_URL, no Redis: help must not need either.
    io: { stdin: Readable.from([]), stdout, stderr, env: {} },
    out: () => Buffer.concat(o).toString('utf8'),
    err: () => Buffer.concat(e).toString('utf8'),
  };
}

describe('crawl <command> --help', () => {
  it.each(Object.keys(COMMANDS))('%s prints its summary and usage and exits 0', async (name) => {
    for (const flag of ['--help', '-h']) {
      const t = capture();
      expect(await runCli([name, flag], t.io)).toBe(0);
      expect(t.err()).toBe('');
      expect(t.out()).toContain(`crawl ${name}: ${COMMANDS[name]!.summary}\n`);
      expect(t.out()).toContain(`usage: crawl ${name}`);
    }
  }, 30_000);

  it('is help among the options, an argument after --', () => {
    expect(wantsHelp(['--json', '--help'])).toBe(true);
    expect(wantsHelp(['x', '-h'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
    expect(wantsHelp(['--helpful'])).toBe(false);
  });
});
