import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startSimWeb, type SimWeb } from './sim-web.js';
import type { SiteSpec } from './sim-site.js';
import { SITE_KINDS, type SiteKind } from './site-kinds.js';

/**
 * The walls `--walls` takes, each a site behind it: the name a user knows, and the interstitial family it serves
 * (SiteSpec.wallFamily). Every one refuses a client that runs no script; what gets through differs (README.md).
 */
const WALL_FAMILIES = {
  cloudflare: 'checking',
  'cloudflare-block': 'blocked',
  'cloudflare-check-then-block': 'check_then_block',
  'cloudflare-interactive': 'cloudflare_interactive',
  anubis: 'anubis',
  fastly: 'fastly',
  wordfence: 'wordfence',
  f5: 'f5_tspd',
  radware: 'radware',
} as const satisfies Record<string, NonNullable<SiteSpec['wallFamily']>>;

/** The wall names `--walls` takes. */
export const WALLS = Object.keys(WALL_FAMILIES) as Array<keyof typeof WALL_FAMILIES>;

const DEFAULT_SITES: SiteKind[] = ['static', 'spa', 'interstitial', 'botwall', 'ratelimit', 'files'];

export const USAGE = [
  'usage: sim-web [--port N] [--sites KIND,...] [--walls WALL,...] [--first-host 127.0.0.2] [--https [--ca-file PATH]] [--json]',
  `  --sites  site kinds, one site each (default ${DEFAULT_SITES.join(',')}; any of ${SITE_KINDS.join(', ')})`,
  `  --walls  one more site behind each of these bot walls: ${WALLS.join(', ')}`,
  '  --port   the port every site listens on, each on its own loopback address (default: a free port per site)',
  '  --https  serve every site over HTTPS, its certificate from a CA made at start, written to --ca-file (PEM) for NODE_EXTRA_CA_CERTS',
].join('\n');

/** What the command line asks for. */
export interface SimWebArgs {
  sites: SiteSpec[];
  port: number;
  firstHost: string;
  json: boolean;
  /** Serve over HTTPS and write the CA here (PEM); null: plain HTTP. */
  caFile: string | null;
}

/** Parse sim-web's arguments; a mistake throws an Error whose message names it (and what is known). */
export function parseSimWebArgs(args: string[]): SimWebArgs {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      sites: { type: 'string' },
      walls: { type: 'string' },
      'first-host': { type: 'string' },
      json: { type: 'boolean' },
      https: { type: 'boolean' },
      'ca-file': { type: 'string' },
    },
  });
  const list = (s: string | undefined) => (s ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  const kinds = values.sites === undefined ? DEFAULT_SITES : list(values.sites);
  for (const k of kinds) if (!(SITE_KINDS as readonly string[]).includes(k)) throw new Error(`unknown site kind '${k}' (known: ${SITE_KINDS.join(', ')})`);
  const walls = list(values.walls);
  for (const w of walls) if (!Object.hasOwn(WALL_FAMILIES, w)) throw new Error(`unknown wall '${w}' (known: ${WALLS.join(', ')})`);
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port must be a port number, got ${JSON.stringify(values.port)}`);
  if (values['ca-file'] !== undefined && !values.https) throw new Error('--ca-file goes with --https');
  return {
    sites: [
      ...(kinds as SiteKind[]).map((kind): SiteSpec => ({ kind })),
      // A wall refuses automation (the `botwall` kind): only a browser that passes for a person's gets through.
      ...walls.map((w): SiteSpec => ({ kind: 'botwall', wallFamily: WALL_FAMILIES[w as keyof typeof WALL_FAMILIES], name: `wall-${w}` })),
    ],
    port,
    firstHost: values['first-host'] ?? '127.0.0.2',
    json: values.json ?? false,
    caFile: values.https ? (values['ca-file'] ?? join(tmpdir(), 'sim-web-ca.pem')) : null,
  };
}

/** Start the sites and print where they are (one line each, or one JSON line with --json). */
export async function startSimWebCli(a: SimWebArgs, print: (line: string) => void): Promise<SimWeb> {
  const web = await startSimWeb({ sites: a.sites, firstHost: a.firstHost, ...(a.port ? { port: a.port } : {}), https: a.caFile !== null });
  if (a.caFile !== null) writeFileSync(a.caFile, web.ca!.cert);
  const rows = web.sites.map((s, i) => ({ name: s.name, kind: s.initialKind, wall: a.sites[i]!.wallFamily ?? null, origin: s.origin, firstPage: s.urls(1, 1)[0]! }));
  if (a.json) print(JSON.stringify({ sites: rows, ...(a.caFile !== null ? { caFile: a.caFile } : {}) }));
  else {
    for (const r of rows) print(`${r.name.padEnd(34)} ${r.firstPage}`);
    if (a.caFile !== null) print(`the sites' CA is in ${a.caFile}: export NODE_EXTRA_CA_CERTS=${a.caFile} for the crawler (each site's http:// listener, another port, redirects to https://).`);
    print('every page links to the next three (/page/N → N+1…N+3), without end: crawl with --follow --max-pages N. Ctrl-C stops and prints what each site saw.');
  }
  return web;
}

/** The bin: start, wait for SIGINT or SIGTERM, print each site's counters, exit. */
export async function main(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let parsed: SimWebArgs;
  try {
    parsed = parseSimWebArgs(args);
  } catch (err) {
    process.stderr.write(`sim-web: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const web = await startSimWebCli(parsed, (line) => process.stdout.write(`${line}\n`));
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  for (const s of web.stats().sites) process.stderr.write(`${s.name}: ${s.pageRequests} page requests (${s.requests.plain} plain, ${s.requests.browser} browser), ${s.served} served, ${s.blocked} blocked\n`);
  await web.close();
  return 0;
}
