#!/usr/bin/env node
import { COMMANDS } from './commands/index.js';
import { UsageError, type CommandIO } from './command.js';

async function main(argv: string[], io: CommandIO): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write('usage: crawl <command> [options]\n\ncommands:\n');
    for (const [cmd, load] of Object.entries(COMMANDS)) {
      io.stdout.write(`  ${cmd.padEnd(12)} ${(await load()).summary}\n`);
    }
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.stderr.write(`crawl: unknown command '${name}' (see 'crawl --help')\n`);
    return 2;
  }
  try {
    return await (await load()).run(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`crawl ${name}: ${err.message}\n`);
      return 2;
    }
    io.stderr.write(`crawl ${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}

const io: CommandIO = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
main(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
