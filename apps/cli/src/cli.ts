import { COMMANDS } from './commands/index.js';
import { UsageError, type CommandIO } from './command.js';

/** Run one `crawl` invocation; resolves to the exit code. Only the named command's module is imported. */
export async function runCli(argv: string[], io: CommandIO): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write('usage: crawl <command> [options]\n\ncommands:\n');
    for (const [cmd, entry] of Object.entries(COMMANDS)) io.stdout.write(`  ${cmd.padEnd(12)} ${entry.summary}\n`);
    return name ? 0 : 2;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.stderr.write(`crawl: unknown command '${name}' (see 'crawl --help')\n`);
    return 2;
  }
  try {
    return await (await entry.load()).run(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`crawl ${name}: ${err.message}\n`);
      return 2;
    }
    io.stderr.write(`crawl ${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}
