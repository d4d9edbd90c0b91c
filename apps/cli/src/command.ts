/** What a `crawl` sub-command receives: its arguments and the process's streams, injectable for tests. */
export interface CommandIO {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/** A sub-command (its `--help` line is in commands/index.ts): resolves to the process exit code. Bad arguments print a clear message and resolve to 2. */
export interface Command {
  /** Its usage lines (`usage: crawl …`), printed by `crawl <command> --help` and with a UsageError. */
  usage: string;
  run(args: string[], io: CommandIO): Promise<number>;
}

/** Thrown for bad command-line arguments; main prints the message and the usage, and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * SIGTERM or SIGINT arrived before the command started any work (it was still waiting for Redis): main prints
 * "interrupted" with the message and exits 130; `crawl run` without --until-idle, whose normal stop is a signal, exits 0.
 */
export class InterruptedError extends Error {
  override name = 'InterruptedError';
}
