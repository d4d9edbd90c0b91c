import { PassThrough, Readable } from 'node:stream';
import type { CommandIO } from '../command.js';

/** A CommandIO with no stdin and an empty environment, and what the command wrote to stdout and stderr. */
export function captureIO(): { io: CommandIO; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const o: Buffer[] = [];
  const e: Buffer[] = [];
  stdout.on('data', (c: Buffer) => o.push(c));
  stderr.on('data', (c: Buffer) => e.push(c));
  return {
    io: { stdin: Readable.from([]), stdout, stderr, env: {} },
    out: () => Buffer.concat(o).toString('utf8'),
    err: () => Buffer.concat(e).toString('utf8'),
  };
}
