import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { benchArgs, benchUsage } from './cli-args.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, '__fixtures__', 'cli-args-child.ts');

/** The fixture bench, in a process of its own as a user runs it: its exit code and both outputs. */
function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, ...args], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('benchArgs in a bench process', () => {
  it('prints the usage generated from the options on --help and -h, and exits 0', () => {
    for (const flag of ['--help', '-h']) {
      const r = run(flag);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('usage: node bench/dist/cli-args-child.js [options]');
      expect(lines.find((l) => l.includes('--rounds'))).toMatch(/^ {2}--rounds N +crawl rounds per mode \(default 6\)$/);
      expect(lines.find((l) => l.includes('--pg-url'))).toMatch(/^ {2}--pg-url URL +Postgres server for the throwaway database$/);
      expect(lines.find((l) => l.includes('--debug'))).toMatch(/^ {2}--debug +print every attempt$/);
      expect(lines.find((l) => l.includes('--seed'))).toMatch(/^ {2}--seed URL +a seed of the crawl \(repeatable\)$/);
      expect(lines.find((l) => l.includes('--help'))).toMatch(/^ {2}-h, --help +print this usage and exit$/);
      expect(lines).toHaveLength(6);
    }
  });

  it('answers an unknown option with one line naming the script and the option, then the usage, exit 2, no stack trace', () => {
    const r = run('--no-such-option');
    expect(r.status, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    const [first, ...rest] = r.stderr.trimEnd().split('\n');
    expect(first).toMatch(/^cli-args-child: Unknown option '--no-such-option'/);
    expect(rest[0]).toBe('usage: node bench/dist/cli-args-child.js [options]');
    expect(rest.join('\n')).toContain('--rounds N');
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stderr).not.toContain('TypeError');
  });

  it('answers a missing value and a stray positional the same way', () => {
    const missing = run('--rounds');
    expect(missing.status, missing.stderr).toBe(2);
    expect(missing.stderr.split('\n')[0]).toMatch(/^cli-args-child: Option '--rounds <value>' argument missing/);
    const stray = run('stray');
    expect(stray.status, stray.stderr).toBe(2);
    expect(stray.stderr.split('\n')[0]).toMatch(/^cli-args-child: Unexpected argument 'stray'/);
    for (const r of [missing, stray]) expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it('parses valid options to their values, with the defaults, and runs on', () => {
    const r = run('--seed', 'http://a.test/', '--debug', '--seed', 'http://b.test/', '--pg-url=postgres://x');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      values: { rounds: '6', debug: true, seed: ['http://a.test/', 'http://b.test/'], 'pg-url': 'postgres://x' },
      positionals: [],
    });
  });
});

describe('benchArgs in this process', () => {
  it('returns what parseArgs returns, defaults included, without help', () => {
    const { values, positionals } = benchArgs({
      script: 'x',
      args: ['--pages', '12', 'undici', 'urls.txt'],
      positionals: '<name> <file>',
      options: { pages: { type: 'string', default: '10' }, rounds: { type: 'string', default: '6' }, debug: { type: 'boolean', default: false }, out: { type: 'string' } },
    });
    expect({ ...values }).toEqual({ pages: '12', rounds: '6', debug: false });
    expect(positionals).toEqual(['undici', 'urls.txt']);
  });

  it('shows the positionals in the usage line, and no default that says nothing', () => {
    const usage = benchUsage({ script: 'ref', positionals: '<name> <file>', options: { on: { type: 'boolean', default: true }, list: { type: 'string', default: '' } } });
    expect(usage.split('\n')).toEqual(['usage: node bench/dist/ref.js [options] <name> <file>', '  --on          (default on)', '  --list VALUE', '  -h, --help    print this usage and exit']);
  });

  it('keeps parseArgs types: values.x is typed from its option, as parseArgs types it', () => {
    // Type-checked with the bench's own compiler options, as a file beside cli-args.ts: a wrong type is a
    // diagnostic, and so is an @ts-expect-error that no longer finds its error.
    const file = join(HERE, '__cli-args-types__.ts');
    const source = `
      import { benchArgs } from './cli-args.js';
      const { values, positionals } = benchArgs({
        script: 'x',
        options: { rounds: { type: 'string', default: '6', description: 'r' }, pg: { type: 'string' }, debug: { type: 'boolean', default: false }, seed: { type: 'string', multiple: true } },
      });
      const rounds: string = values.rounds;
      const pg: string | undefined = values.pg;
      const debug: boolean = values.debug;
      const seeds: string[] | undefined = values.seed;
      const none: [] = positionals;
      // @ts-expect-error no default: possibly undefined
      const pgDefined: string = values.pg;
      // @ts-expect-error not an option
      void values.nope;
      // @ts-expect-error help is answered by benchArgs
      void values.help;
      const ref = benchArgs({ script: 'y', positionals: '<a> <b>', options: { c: { type: 'string', default: '32' } } });
      const given: string[] = ref.positionals;
      const c: string = ref.values.c;
      void [rounds, pg, debug, seeds, none, pgDefined, given, c];
    `;
    const config = ts.getParsedCommandLineOfConfigFile(join(HERE, '..', 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
    const host = ts.createCompilerHost(config.options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest));
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => name === file || fileExists(name);
    const program = ts.createProgram({ rootNames: [file], options: { ...config.options, noEmit: true }, host });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  });
});
