import { parseArgs } from 'node:util';
import {
  classifyProbe,
  extractResponseHeuristics,
  extractUrlHeuristics,
  InvalidUrlError,
  normalizeUrl,
  validateResponseDetailed,
  type ChallengeKind,
  type Heuristic,
  type ResponseSnapshot,
  type ValidationResult,
} from '@crawler/core';
import { UsageError, type Command } from '../command.js';

const USAGE = "usage: crawl classify [--status N] [--header 'Name: value']... [--url URL] [--json] < body";

/** Bodies above this are cut before analysis, as the validator caps at 2 MiB anyway; it keeps stdin bounded. */
const MAX_STDIN_BYTES = 16 * 1024 * 1024;

/** What `crawl classify` was asked, parsed and checked. */
export interface ClassifyArgs {
  status: number;
  headers: Record<string, string>;
  url?: string;
  /** Print the whole result as one JSON object instead of the summary lines. */
  json: boolean;
}

/** Parse the command line; every mistake is a UsageError that says which argument and what it got. */
export function parseClassifyArgs(args: string[]): ClassifyArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { status: { type: 'string' }, header: { type: 'string', multiple: true }, url: { type: 'string' }, json: { type: 'boolean' } },
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
  return { status, headers, ...(url !== undefined ? { url } : {}), json: values.json ?? false };
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

type Classification = {
  url?: string;
  status: number;
  bodyBytes: number;
  validation: ValidationResult;
  challenge: { isChallenge: boolean; vendor: string | null; kind: ChallengeKind | null };
  responseHeuristics: Heuristic[];
  urlHeuristics?: Heuristic[];
  probe: { fetcher: string; reuse: boolean; reason: string };
  challengeScores: { vendor: string; score: number; decisive: boolean }[];
};

/** The result as aligned `name  value` lines, for a person at a terminal. */
export function formatClassification(c: Classification): string {
  const v = c.validation;
  const yesNo = (b: boolean): string => (b ? 'yes' : 'no');
  const heuristics = (hs: Heuristic[]): string => hs.map((h) => `${h.type}=${h.value}`).join(' ');
  const rows: [string, string][] = [
    ...(c.url ? [['url', c.url] as [string, string]] : []),
    ['status', String(c.status)],
    ['body', `${c.bodyBytes} bytes, ${v.contentFamily}${v.isHtml ? `, ${v.visibleTextLength} characters of text` : ''}`],
    ['blocked', v.isBlocked ? `yes: ${v.blockType}${v.blockVendor ? ` (${v.blockVendor})` : ''}` : 'no'],
    ['challenge', c.challenge.isChallenge ? `${c.challenge.vendor ?? 'unknown vendor'}, kind ${c.challenge.kind}` : 'none'],
    ['scores', c.challengeScores.length > 0 ? c.challengeScores.map((s) => `${s.vendor} ${s.score}${s.decisive ? ' (decisive)' : ''}`).join(', ') : '-'],
    ['spa', v.hasSpa ? `yes (${v.framework})` : 'no'],
    ['empty', yesNo(v.isEmpty)],
    ['paywall', yesNo(v.hasPaywall)],
    ['probe', `${c.probe.fetcher} (${c.probe.reason}${c.probe.reuse ? ', reuses the probe' : ''})`],
    ['response', heuristics(c.responseHeuristics) || '-'],
    ...(c.urlHeuristics ? [['url heuristics', heuristics(c.urlHeuristics) || '-'] as [string, string]] : []),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, val]) => `${k.padEnd(width)}  ${val}\n`).join('');
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
      // What the page is as a wall: only an `interstitial` clears by itself, so only it is worth a browser's wait.
      challenge: { isChallenge: challenge.isChallenge, vendor: challenge.isChallenge ? challenge.vendor : null, kind: challenge.kind },
      responseHeuristics: extractResponseHeuristics(response, validation),
      ...(opts.url ? { urlHeuristics: extractUrlHeuristics(opts.url) } : {}),
      probe: { fetcher: probe.fetcher, reuse: probe.reuse, reason: probe.reason },
      challengeScores: challenge.scores.map((s) => ({ vendor: s.vendor, score: s.score, decisive: s.decisive })),
    };
    io.stdout.write(opts.json ? `${JSON.stringify(out, null, 2)}\n` : formatClassification(out));
    return 0;
  },
};

export default command;
