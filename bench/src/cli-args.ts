/**
 * The benches' command lines: `parseArgs` from node:util with a `--help` (`-h`) that prints a usage generated from the
 * options, and a mistyped or unknown option answered with one line and the usage on stderr, exit code 2, instead of a
 * TypeError's stack trace.
 *
 *   const { values } = benchArgs({
 *     script: 'frontier-bench',
 *     options: { pages: { type: 'string', default: '3000', description: 'pages of the generated site' } },
 *   });
 *
 * `values` is typed as parseArgs' own result for the same options (`values.pages` is a string here).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type ParseArgsOption = NonNullable<ParseArgsConfig['options']>[string];

/** One option as parseArgs takes it, plus what the usage text says about it. */
export interface BenchOption extends ParseArgsOption {
  /** One line for the usage text: what the script does with the option. */
  description?: string;
  /** The value's name in the usage text (`--pg-url URL`); string options only. Default `N` for a numeric default, else `VALUE`. */
  placeholder?: string;
}

export interface BenchArgsConfig {
  /** The script's name, as in `node bench/dist/<script>.js`; starts the error line. */
  script: string;
  options: Record<string, BenchOption>;
  /** The positional arguments as the usage line shows them (`<name> <urls-file>`); given, positionals are allowed. */
  positionals?: string;
  /** Default `process.argv.slice(2)`. */
  args?: readonly string[];
}

/** What parseArgs returns for the same options (strict), without `help`, which benchArgs answers itself. */
export type BenchArgs<C extends BenchArgsConfig> = ReturnType<
  typeof parseArgs<{ options: C['options']; strict: true; allowPositionals: C extends { positionals: string } ? true : false }>
>;

function optionLabel(name: string, o: BenchOption): string {
  const short = o.short ? `-${o.short}, ` : '';
  if (o.type === 'boolean') return `${short}--${name}`;
  const numeric = typeof o.default === 'string' && /^-?\d+(\.\d+)?$/.test(o.default);
  return `${short}--${name} ${o.placeholder ?? (numeric ? 'N' : 'VALUE')}`;
}

function defaultText(o: BenchOption): string | undefined {
  const d = o.default;
  if (d === undefined || d === false || d === '' || (Array.isArray(d) && d.length === 0)) return undefined;
  if (d === true) return 'default on';
  return `default ${Array.isArray(d) ? d.join(',') : d}`;
}

/** The usage text: the command line, then one line per option with its description and default. */
export function benchUsage(config: BenchArgsConfig): string {
  const rows: Array<[string, string]> = Object.entries(config.options).map(([name, o]) => {
    const notes = [defaultText(o), o.multiple ? 'repeatable' : undefined].filter(Boolean);
    const description = [o.description, notes.length > 0 ? `(${notes.join(', ')})` : undefined].filter(Boolean).join(' ');
    return [optionLabel(name, o), description];
  });
  rows.push(['-h, --help', 'print this usage and exit']);
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const lines = rows.map(([label, description]) => `  ${label.padEnd(width)}${description.split('\n').join(`\n  ${' '.repeat(width)}`)}`.trimEnd());
  const positionals = config.positionals ? ` ${config.positionals}` : '';
  return [`usage: node bench/dist/${config.script}.js [options]${positionals}`, ...lines].join('\n');
}

/** A command-line mistake: `<script>: <message>` and the usage on stderr, exit code 2. */
export function exitUsage(config: BenchArgsConfig, message: string): never {
  process.stderr.write(`${config.script}: ${message}\n${benchUsage(config)}\n`);
  return process.exit(2);
}

function isParseArgsError(err: unknown): err is Error & { code: string } {
  const code: unknown = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

/**
 * parseArgs (strict) over `config.args` or the process' arguments, with `--help`/`-h`: prints the usage to stdout and
 * exits 0. A parse error (unknown option, missing value, unexpected positional) prints `<script>: <message>` and the
 * usage to stderr and exits 2.
 */
export function benchArgs<C extends BenchArgsConfig>(config: C): BenchArgs<C> {
  const options: Record<string, ParseArgsOption> = {};
  for (const [name, { description, placeholder, ...option }] of Object.entries(config.options)) {
    void description;
    void placeholder;
    options[name] = option;
  }
  options.help = { type: 'boolean', short: 'h' };
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: config.args ?? process.argv.slice(2), options, strict: true, allowPositionals: config.positionals !== undefined });
  } catch (err) {
    if (isParseArgsError(err)) exitUsage(config, err.message);
    throw err;
  }
  if (parsed.values.help === true) {
    process.stdout.write(`${benchUsage(config)}\n`);
    process.exit(0);
  }
  delete parsed.values.help;
  return parsed as BenchArgs<C>;
}

/**
 * For a script with a usage text of its own: `parse` (a parseArgs call) with its mistakes answered like benchArgs'
 * (`<script>: <message>` and the usage on stderr, exit code 2) instead of a stack trace.
 */
export function parseWithUsage<T>(script: string, usage: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (!isParseArgsError(err)) throw err;
    process.stderr.write(`${script}: ${err.message}\n${usage}\n`);
    return process.exit(2);
  }
}
