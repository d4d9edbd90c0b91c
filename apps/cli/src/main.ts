#!/usr/bin/env node
import { runCli } from './cli.js';
import type { CommandIO } from './command.js';

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
