#!/usr/bin/env node
import { runCli } from './cli.js';
import type { CommandIO } from './command.js';

// `crawl content <url> | head`: a reader that goes away is the end of the output, not an error to crash on.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? 0);
  });
}

const io: CommandIO = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
runCli(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
