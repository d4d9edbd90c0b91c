#!/usr/bin/env node
/**
 * The many-domains workload (issue 14): pages spread over 50 or 500 loopback hosts, crawled as a user crawls them
 * (`crawl crawl --json urls.txt`, timed from process start to exit) beside the in-process time, against a bare
 * undici + cheerio loop and Crawlee's CheerioCrawler run the same way, with per-domain politeness off for everyone.
 * Then a second crawl of other pages on the same, now known, hosts.
 *
 *   node bench/dist/many-domains.js --hosts 50,500 --pages-per-host 30 --rounds 2
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseWithUsage } from './cli-args.js';
import { forkRpcChild, type RpcChild } from './child-rpc.js';
import { clearBenchPrefix } from './ours.js';
import { formatTable } from './report.js';
import type { CrawlMeasurement } from './reference-result.js';
import {
  diffCommandStats,
  enableStatements,
  readStatements,
  readDbCounters,
  diffDbCounters,
  localServices,
  machineCpuMs,
  reapedChildrenCpuMs,
  redisCommandStats,
  resetStatements,
  treeCpuMs,
  type StatementStat,
} from './service-stats.js';
import { listPageUrls, type RequestStats } from './synthetic-web.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BENCH_ROOT = resolve(HERE, '..');
// What a user runs (`npx crawl`): bin/crawl.js, which loads the build's bundle.
const CLI = resolve(BENCH_ROOT, '..', 'apps', 'cli', 'bin', 'crawl.js');
const CONTENDERS = ['undici', 'crawlee', 'crawlee-store', 'scrapy', 'bullmq', 'ours'] as const;
/** Debian's Python, where `python3-scrapy` installs Scrapy. */
const PYTHON = '/usr/bin/python3';
const SCRAPY_SPIDER = resolve(BENCH_ROOT, 'python', 'scrapy_crawl.py');
type Contender = (typeof CONTENDERS)[number];

const USAGE = `usage: node bench/dist/many-domains.js [options]
  --hosts 50,500          loopback hosts per workload (127.0.0.10, ...), comma-separated
  --pages-per-host 30     pages per host in each crawl (50 hosts: 1 500 pages)
  --concurrency 32        pages in flight, every contender
  --crawlers LIST         subset of ${CONTENDERS.join(',')} (default undici,crawlee,crawlee-store,scrapy,ours)
                          crawlee-store: Crawlee with its persisted storage, every page pushed to its dataset;
                          scrapy: Debian's python3-scrapy, every page to a JSON-lines feed (installed if missing)
  --rounds 1              repeat; ratios are taken within a round, then the median
  --no-second             skip our second crawl
  --variant NAME:K=V,...  also crawl with ours under other settings, labelled ours[NAME] (repeatable); K=V are
                          environment variables, CLI=path runs another build of crawl (e.g. a baseline worktree)
  --profile-dir DIR       V8 CPU profiles of our crawl processes
  --keep-db               keep our crawls' databases and Redis keys for inspection (their names are printed)
  --service-pids A,B      CPU of these process trees per crawl (default: the crawl's Postgres postmaster and
                          redis-server when they run on this machine; shared ones count everything they serve)
  --pg-url URL            server for the crawl's database (default TEST_PG_URL or the local one)
  --redis-url URL         default redis://127.0.0.1:6379
  --out DIR               default bench/results`;

/** Per-domain politeness off, robots off, plain HTTP only: what every contender runs with (issue 14). */
export function politenessOffEnv(concurrency: number): Record<string, string> {
  return {
    DOMAIN_MAX_CONCURRENCY: String(concurrency),
    DOMAIN_MIN_DELAY_MS: '0',
    ROBOTS_ENABLED: 'false',
    FETCHERS: `simple_http:${concurrency}`,
    ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'warn',
  };
}

/** Our crawler under other settings: its label suffix, environment overrides, and optionally another build. */
export interface OursVariant {
  name: string;
  env: Record<string, string>;
  cli?: string;
}

/** Parse `name:K=V,K=V` (CLI=path picks another build of crawl). */
export function parseVariant(spec: string): OursVariant {
  const m = /^([\w.-]+):(.*)$/.exec(spec);
  if (!m) throw new Error(`--variant: expected NAME:K=V,..., got ${JSON.stringify(spec)}`);
  const env: Record<string, string> = {};
  let cli: string | undefined;
  for (const pair of m[2]!.split(',').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new Error(`--variant ${m[1]}: expected K=V, got ${JSON.stringify(pair)}`);
    const [k, v] = [pair.slice(0, eq), pair.slice(eq + 1)];
    if (k === 'CLI') cli = resolve(v);
    else env[k] = v;
  }
  return { name: m[1]!, env, cli };
}

interface Options {
  variants: OursVariant[];
  hosts: number[];
  pagesPerHost: number;
  concurrency: number;
  crawlers: Contender[];
  rounds: number;
  second: boolean;
  profileDir?: string;
  keepDb: boolean;
  servicePids: number[];
  pgUrl?: string;
  redisUrl: string;
  outDir: string;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseWithUsage('many-domains', USAGE, () => parseArgs({
    args: argv,
    options: {
      hosts: { type: 'string', default: '50' },
      'pages-per-host': { type: 'string', default: '30' },
      concurrency: { type: 'string', default: '32' },
      crawlers: { type: 'string', default: 'undici,crawlee,crawlee-store,scrapy,ours' },
      rounds: { type: 'string', default: '1' },
      'no-second': { type: 'boolean', default: false },
      variant: { type: 'string', multiple: true, default: [] },
      'profile-dir': { type: 'string' },
      'keep-db': { type: 'boolean', default: false },
      'service-pids': { type: 'string', default: '' },
      'pg-url': { type: 'string' },
      'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
      out: { type: 'string', default: join(BENCH_ROOT, 'results') },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const int = (name: string, v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: expected an integer >= 1, got ${JSON.stringify(v)}`);
    return n;
  };
  const crawlers = values.crawlers.split(',').map((s) => s.trim()) as Contender[];
  for (const c of crawlers) if (!CONTENDERS.includes(c)) throw new Error(`--crawlers: unknown ${JSON.stringify(c)}`);
  return {
    variants: values.variant.map(parseVariant),
    hosts: values.hosts.split(',').map((h) => int('hosts', h.trim())),
    pagesPerHost: int('pages-per-host', values['pages-per-host']),
    concurrency: int('concurrency', values.concurrency),
    crawlers,
    rounds: int('rounds', values.rounds),
    second: !values['no-second'],
    profileDir: values['profile-dir'],
    keepDb: values['keep-db'] === true,
    servicePids: values['service-pids'].split(',').filter(Boolean).map((p) => int('service-pids', p)),
    pgUrl: values['pg-url'],
    redisUrl: values['redis-url'],
    outDir: resolve(values.out),
  };
}

/** One crawl of one workload. */
export interface ManyDomainsRow {
  label: string;
  hosts: number;
  round: number;
  pages: number;
  ok: number;
  failed: number;
  /** Process start to exit, as a user times the command. */
  userMs: number;
  /** The crawl alone: for references the crawl call, for ours first link stored → last link settled (Postgres). */
  inProcessMs: number;
  /** CPU of the crawling process, user + system. */
  cpuMs: number;
  pageRequests: number;
  otherRequests: number;
  probes?: number;
  /** CPU of each service tree during the crawl: --service-pids, or the local Postgres and Redis found. */
  serviceCpuMs?: number[];
  /** What each of serviceCpuMs is (`postgres`, `redis`, or the pid given). */
  serviceNames?: string[];
  /** The whole machine during the crawl (every process, every core), in ms: busy, and busy + idle. */
  machine?: { busyMs: number; totalMs: number };
  redisCalls?: { command: string; calls: number; usec: number }[];
  statements?: StatementStat[];
  /** Our crawl's database: commits, rows, WAL bytes (server-wide) and statement calls. */
  db?: ReturnType<typeof diffDbCounters>;
}

interface SpawnResult {
  code: number;
  stdout: string;
  stderr: string;
  wallMs: number;
  cpuMs: number;
}

/** Run a node process to completion, timing it from spawn to exit; its CPU is read from our reaped-children counters. */
function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<SpawnResult> {
  return runCommand(process.execPath, args, env);
}

/** Run any program to completion, timed from spawn to exit, its CPU read from our reaped-children counters. */
async function runCommand(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<SpawnResult> {
  const cpu0 = await reapedChildrenCpuMs();
  const t0 = performance.now();
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const code = await new Promise<number>((res) => child.once('close', (c) => res(c ?? 1)));
  const wallMs = performance.now() - t0;
  return { code, wallMs, cpuMs: (await reapedChildrenCpuMs()) - cpu0, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

interface Services {
  opts: Options;
  web: RpcChild;
  /** The service trees whose CPU each crawl reports: --service-pids, else the local ones our first crawl found. */
  services?: { name: string; pid: number }[];
}

/** Measure one crawl at the services: server counts, service CPU and Redis commands around `fn`. */
async function around<T>(
  s: Services,
  fn: () => Promise<T>,
): Promise<{ value: T; server: RequestStats; serviceCpuMs: number[]; serviceNames: string[]; redisCalls: ManyDomainsRow['redisCalls']; machine: ManyDomainsRow['machine'] }> {
  await s.web.call('reset');
  const services = s.services ?? [];
  const cpu0 = await Promise.all(services.map((x) => treeCpuMs(x.pid)));
  const cmd0 = await redisCommandStats(s.opts.redisUrl);
  const m0 = await machineCpuMs();
  const value = await fn();
  const m1 = await machineCpuMs();
  const cmd1 = await redisCommandStats(s.opts.redisUrl);
  const cpu1 = await Promise.all(services.map((x) => treeCpuMs(x.pid)));
  return {
    value,
    server: await s.web.call<RequestStats>('stats'),
    serviceCpuMs: cpu1.map((c, i) => c - cpu0[i]!),
    serviceNames: services.map((x) => x.name),
    redisCalls: diffCommandStats(cmd0, cmd1).slice(0, 30),
    machine: { busyMs: m1.busy - m0.busy, totalMs: m1.total - m0.total },
  };
}

/**
 * Scrapy as its users get it on Debian: `python3-scrapy`, installed here (as root, from Debian's archive) when the
 * bench first needs it. Returns why it cannot run, or null.
 */
async function ensureScrapy(): Promise<string | null> {
  const probe = () => runCommand(PYTHON, ['-c', 'import scrapy'], process.env).then((r) => r.code === 0, () => false);
  if (await probe()) return null;
  if (process.getuid?.() !== 0) return 'scrapy: python3-scrapy is not installed (apt-get install -y python3-scrapy)';
  console.log('  installing python3-scrapy (Debian) …');
  await runCommand('apt-get', ['install', '-y', '-qq', 'python3-scrapy'], { ...process.env, DEBIAN_FRONTEND: 'noninteractive' });
  return (await probe()) ? null : 'scrapy: apt-get install python3-scrapy failed';
}

/** Scrapy over the same pages, every page written to a JSON-lines feed, timed from process start to exit. */
async function runScrapy(s: Services, file: string): Promise<SpawnResult> {
  const dir = await mkdtemp(join(tmpdir(), 'crawler-bench-scrapy-'));
  try {
    return await runCommand(PYTHON, [SCRAPY_SPIDER, file, '--concurrency', String(s.opts.concurrency), '--feed', join(dir, 'pages.jsonl')], process.env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function runReference(s: Services, name: Exclude<Contender, 'ours'>, file: string, pages: number, hosts: number, round: number): Promise<ManyDomainsRow> {
  if (name === 'scrapy') {
    const missing = await ensureScrapy();
    if (missing) throw new Error(missing);
  }
  const { value: r, server, serviceCpuMs, redisCalls, machine } = await around(s, () =>
    name === 'scrapy'
      ? runScrapy(s, file)
      : runNode([join(HERE, 'reference-main.js'), name, file, '--concurrency', String(s.opts.concurrency), '--redis-url', s.opts.redisUrl], process.env),
  );
  if (r.code !== 0) throw new Error(`${name} exited ${r.code}: ${r.stderr.slice(-500)}`);
  const m = JSON.parse(r.stdout.trim().split('\n').pop()!) as CrawlMeasurement;
  return { label: name, hosts, round, pages, ok: m.okPages, failed: m.failedPages, userMs: r.wallMs, inProcessMs: m.elapsedMs, cpuMs: r.cpuMs, pageRequests: server.pageRequests, otherRequests: server.otherRequests + server.robotsRequests, serviceCpuMs, redisCalls, machine };
}

interface CrawlJson {
  totals: { links: number; done: number; failed: number; bySource: Record<string, number> };
}

/** Our first and second crawl: `crawl crawl --json <file>` in a fresh process each, on one fresh database. */
async function runOurs(s: Services, files: string[], pages: number, hosts: number, round: number, variant?: OursVariant): Promise<ManyDomainsRow[]> {
  const { createTestDatabase } = await import('@crawler/db/testing');
  const db = await createTestDatabase('many', { serverUrl: s.opts.pgUrl });
  const prefix = `{crawler-many-${process.pid}-${randomBytes(3).toString('hex')}}`;
  const statements = await enableStatements(db.prisma);
  s.services ??= await localServices(db.prisma, s.opts.redisUrl);
  const rows: ManyDomainsRow[] = [];
  try {
    for (const [i, file] of files.entries()) {
      const name = variant ? `ours[${variant.name}]` : 'ours';
      const label = i === 0 ? name : `${name} (2nd crawl)`;
      const env = { ...process.env, ...politenessOffEnv(s.opts.concurrency), ...variant?.env, DATABASE_URL: db.url, REDIS_URL: s.opts.redisUrl, QUEUE_PREFIX: prefix };
      const prof = s.opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${s.opts.profileDir}`, `--cpu-prof-name=${name}-h${hosts}-r${round}-${i + 1}.cpuprofile`] : [];
      const [mark] = await db.prisma.$queryRawUnsafe<{ now: Date }[]>('SELECT clock_timestamp() AS now');
      if (statements) await resetStatements(db.prisma);
      const dbc0 = await readDbCounters(db.prisma, false);
      const { value: r, server, serviceCpuMs, serviceNames, redisCalls, machine } = await around(s, () => runNode([...prof, variant?.cli ?? CLI, 'crawl', '--json', file], env));
      if (!r.stdout.trim()) throw new Error(`crawl exited ${r.code} without a report: ${r.stderr.slice(-800)}`);
      const report = JSON.parse(r.stdout) as CrawlJson;
      const dbStats = diffDbCounters(dbc0, await readDbCounters(db.prisma, statements));
      const [span] = await db.prisma.$queryRawUnsafe<{ first: Date; last: Date }[]>(
        'SELECT min(created_at) AS first, max(updated_at) AS last FROM links WHERE created_at >= $1',
        mark!.now,
      );
      rows.push({
        label, hosts, round, pages,
        ok: report.totals.done,
        failed: report.totals.links - report.totals.done,
        userMs: r.wallMs,
        inProcessMs: span ? span.last.getTime() - span.first.getTime() : 0,
        cpuMs: r.cpuMs,
        pageRequests: server.pageRequests,
        otherRequests: server.otherRequests + server.robotsRequests,
        probes: report.totals.bySource.probe ?? 0,
        serviceCpuMs,
        serviceNames,
        redisCalls,
        machine,
        statements: statements ? await readStatements(db.prisma) : undefined,
        db: dbStats,
      });
    }
  } finally {
    if (s.opts.keepDb) console.log(`\n  kept: database ${db.url}, Redis prefix ${prefix}`);
    else {
      await db.drop().catch(() => undefined);
      await clearBenchPrefix(s.opts.redisUrl, prefix).catch(() => undefined);
    }
  }
  return rows;
}

const perSec = (pages: number, ms: number): number => (ms > 0 ? pages / (ms / 1000) : 0);

async function runWorkload(opts: Options, hosts: number, round: number, dir: string): Promise<ManyDomainsRow[]> {
  const pages = hosts * opts.pagesPerHost;
  const web = forkRpcChild(join(HERE, 'synthetic-web-child.js'));
  const s: Services = { opts, web, ...(opts.servicePids.length > 0 ? { services: opts.servicePids.map((pid) => ({ name: String(pid), pid })) } : {}) };
  const rows: ManyDomainsRow[] = [];
  try {
    const { origins } = await web.call<{ origins: string[] }>('start', { pages: pages * 2, domains: hosts, latencyMs: 0 });
    // Round-robin over hosts: the first half gives every host pagesPerHost pages, the second half as many others.
    const all = listPageUrls(origins, pages * 2);
    const files = [join(dir, `h${hosts}-first.txt`), join(dir, `h${hosts}-second.txt`)];
    await writeFile(files[0]!, `${all.slice(0, pages).join('\n')}\n`);
    await writeFile(files[1]!, `${all.slice(pages).join('\n')}\n`);
    const contenders: (Contender | OursVariant)[] = [...opts.crawlers, ...opts.variants];
    const shift = (round - 1) % contenders.length;
    for (const c of [...contenders.slice(shift), ...contenders.slice(0, shift)]) {
      const name = typeof c === 'string' ? c : `ours[${c.name}]`;
      process.stdout.write(`  ${name.padEnd(8)} ${hosts} hosts, ${pages} pages … `);
      try {
        const ourFiles = opts.second ? files : files.slice(0, 1);
        const got =
          typeof c !== 'string' ? await runOurs(s, ourFiles, pages, hosts, round, c) : c === 'ours' ? await runOurs(s, ourFiles, pages, hosts, round) : [await runReference(s, c, files[0]!, pages, hosts, round)];
        rows.push(...got);
        process.stdout.write(`${got.map((r) => `${perSec(r.ok, r.userMs).toFixed(0)} pages/s user-visible, ${perSec(r.ok, r.inProcessMs).toFixed(0)} in-process${r.label === name ? '' : ` ${r.label.slice(name.length + 1)}`}`).join('; ')}\n`);
      } catch (err) {
        process.stdout.write(`FAILED: ${(err as Error).message}\n`);
      }
    }
  } finally {
    await web.stop();
  }
  return rows;
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** Ratio of a row's pages/s to a reference's in the same round and workload (user-visible or in-process). */
function ratioTo(rows: ManyDomainsRow[], row: ManyDomainsRow, ref: string, key: 'userMs' | 'inProcessMs'): number {
  const r = rows.find((x) => x.label === ref && x.hosts === row.hosts && x.round === row.round);
  return r ? perSec(row.ok, row[key]) / perSec(r.ok, r[key]) : NaN;
}

/** The report table of one workload: medians over rounds, ratios taken within each round first. */
export function formatManyDomainsTable(rows: ManyDomainsRow[], hosts: number): string {
  const of = rows.filter((r) => r.hosts === hosts);
  const labels = [...new Set(of.map((r) => r.label))];
  const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '–');
  return formatTable(
    ['crawl', 'pages', 'ok', 'user-visible pages/s', '× undici', '× crawlee', '× crawlee-store', '× scrapy', 'in-process pages/s', '× undici', '× crawlee', 'req/page', 'probes', 'CPU ms/page', 'machine CPU ms/page', 'machine busy', 'rounds: user pages/s'],
    labels.map((label) => {
      const rs = of.filter((r) => r.label === label);
      const m = (fn: (r: ManyDomainsRow) => number) => median(rs.map(fn));
      return [
        label,
        String(rs[0]!.pages),
        f(m((r) => r.ok), 0),
        f(m((r) => perSec(r.ok, r.userMs)), 0),
        f(m((r) => ratioTo(of, r, 'undici', 'userMs'))),
        f(m((r) => ratioTo(of, r, 'crawlee', 'userMs'))),
        f(m((r) => ratioTo(of, r, 'crawlee-store', 'userMs'))),
        f(m((r) => ratioTo(of, r, 'scrapy', 'userMs'))),
        f(m((r) => perSec(r.ok, r.inProcessMs)), 0),
        f(m((r) => ratioTo(of, r, 'undici', 'inProcessMs'))),
        f(m((r) => ratioTo(of, r, 'crawlee', 'inProcessMs'))),
        f(m((r) => r.pageRequests / r.pages)),
        rs[0]!.probes === undefined ? '–' : f(m((r) => r.probes ?? 0), 0),
        f(m((r) => r.cpuMs / Math.max(1, r.ok)), 1),
        f(m((r) => (r.machine ? r.machine.busyMs / Math.max(1, r.ok) : NaN)), 1),
        Number.isFinite(m((r) => (r.machine ? r.machine.busyMs / r.machine.totalMs : NaN))) ? `${(100 * m((r) => r.machine!.busyMs / r.machine!.totalMs)).toFixed(0)}%` : '–',
        rs.map((r) => perSec(r.ok, r.userMs).toFixed(0)).join(', '),
      ];
    }),
  );
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const startedAt = new Date();
  console.log(`# many-domains bench ${startedAt.toISOString()}`);
  console.log(`cpus ${cpus().length}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, hosts ${opts.hosts.join(',')}, ${opts.pagesPerHost} pages/host, concurrency ${opts.concurrency}`);
  const dir = await mkdtemp(join(tmpdir(), 'crawler-many-'));
  if (opts.profileDir) await mkdir(opts.profileDir, { recursive: true });
  const rows: ManyDomainsRow[] = [];
  try {
    for (let round = 1; round <= opts.rounds; round++) {
      for (const hosts of opts.hosts) {
        console.log(`\nround ${round}/${opts.rounds}, ${hosts} hosts (load ${loadavg()[0]!.toFixed(2)})`);
        rows.push(...(await runWorkload(opts, hosts, round, dir)));
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  for (const hosts of opts.hosts) {
    console.log(`\n## ${hosts} hosts, ${hosts * opts.pagesPerHost} pages, concurrency ${opts.concurrency}${opts.rounds > 1 ? `, median of ${opts.rounds}` : ''}\n`);
    console.log(formatManyDomainsTable(rows, hosts));
  }
  for (const r of rows.filter((x) => x.label.startsWith('ours'))) {
    console.log(`\n${r.label}, ${r.hosts} hosts, round ${r.round}: CPU ${(r.cpuMs / r.ok).toFixed(2)} ms/page${r.serviceCpuMs?.length ? `, services ${r.serviceCpuMs.map((c, i) => `${r.serviceNames?.[i] ?? ''} ${(c / r.ok).toFixed(2)}`.trim()).join(', ')} ms/page` : ''}`);
    if (r.db) console.log(`  pg per page: ${(r.db.commits / r.ok).toFixed(2)} commits, ${r.statements ? (r.db.statements / r.ok).toFixed(2) : '–'} statements, ${(r.db.inserted / r.ok).toFixed(1)} rows inserted, ${(r.db.updated / r.ok).toFixed(1)} updated, ${(r.db.walBytes / r.ok / 1024).toFixed(1)} KiB WAL; redis ${(r.redisCalls ?? []).reduce((a, c) => a + c.calls, 0) / r.ok > 0 ? ((r.redisCalls ?? []).reduce((a, c) => a + c.calls, 0) / r.ok).toFixed(1) : '–'} calls/page`);
    console.log(`  redis calls/page: ${(r.redisCalls ?? []).map((c) => `${c.command} ${(c.calls / r.ok).toFixed(2)}`).join(', ')}`);
    for (const st of r.statements ?? []) console.log(`  pg ${(st.calls / r.ok).toFixed(2)}/page ${(st.totalMs / r.ok).toFixed(3)} ms/page  ${st.query}`);
  }
  await mkdir(opts.outDir, { recursive: true });
  const report = { startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), machine: { cpus: cpus().length, loadavgAtEnd: loadavg(), node: process.version }, options: opts, rows };
  const file = join(opts.outDir, `many-domains-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, JSON.stringify(report, null, 2));
  console.log(`\nresults: ${file}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
