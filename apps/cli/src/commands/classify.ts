import { parseArgs } from 'node:util';
import {
  classifyProbe,
  extractResponseHeuristics,
  extractUrlHeuristics,
  InvalidUrlError,
  normalizeUrl,
  validateResponseDetailed,
  type ResponseSnapshot,
} from '@crawler/core';
import { UsageError, type Command } from '../command.js';

const USAGE = "usage: crawl classify [--status N] [--header 'Name: value']... [--url URL] < body";

/** Bodies above this are cut before analysis, as the validator caps at 2 MiB anyway; it keeps stdin bounded. */
const MAX_STDIN_BYTES = 16 * 1024 * 1024;

/** What `crawl classify` was asked, parsed and checked. */
export interface ClassifyArgs {
  status: number;
  headers: Record<string, string>;
  url?: string;
}

/** Parse the command line; every mistake is a UsageError that says which argument and what it got. */
export function parseClassifyArgs(args: string[]): ClassifyArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { status: { type: 'string' }, header: { type: 'string', multiple: true }, url: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)} (${USAGE})`);
  }
  const { values } = parsed;
  let status = 200;
  if (values.status !== undefined) {
    status = Number(values.status);
    if (!/^\d{3}$/.test(values.status) || status < 100) throw new UsageError(`--status must be a 3-digit HTTP status (got ${JSON.stringify(values.status)})`);
  }
  const headers: Record<string, string> = {};
  for (const h of values.header ?? []) {
    const colon = h.indexOf(':');
    const name = colon > 0 ? h.slice(0, colon).trim().toLowerCase() : '';
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new UsageError(`--header must look like 'Name: value' (got ${JSON.stringify(h)})`);
    const value = h.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let url: string | undefined;
  if (values.url !== undefined) {
    try {
      url = normalizeUrl(values.url);
    } catch (err) {
      if (err instanceof InvalidUrlError) throw new UsageError(`--url: ${err.message}`);
      throw err;
    }
  }
  return { status, headers, ...(url !== undefined ? { url } : {}) };
}

async function readAll(stream: NodeJS.ReadableStream, maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    if (total + buf.length > maxBytes) {
      chunks.push(buf.subarray(0, maxBytes - total));
      total = maxBytes;
      break;
    }
    chunks.push(buf);
    total += buf.length;
  }
  return Buffer.concat(chunks, total);
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    if (args.includes('--help') || args.includes('-h')) {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const opts = parseClassifyArgs(args);
    if (io.stdin.isTTY) throw new UsageError(`pipe a response body into stdin (${USAGE})`);
    const body = await readAll(io.stdin, MAX_STDIN_BYTES);
    const response: ResponseSnapshot = { status: opts.status, headers: opts.headers, body, ...(opts.url ? { url: opts.url } : {}) };
    const { result: validation, challenge } = validateResponseDetailed(response);
    const probe = classifyProbe({ response });
    const out = {
      ...(opts.url ? { url: opts.url } : {}),
      status: opts.status,
      bodyBytes: body.byteLength,
      validation,
      responseHeuristics: extractResponseHeuristics(response, validation),
      ...(opts.url ? { urlHeuristics: extractUrlHeuristics(opts.url) } : {}),
      probe: { fetcher: probe.fetcher, reuse: probe.reuse, reason: probe.reason },
      challengeScores: challenge.scores.map((s) => ({ vendor: s.vendor, score: s.score, decisive: s.decisive })),
    };
    io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  },
};

export default command;
