#!/usr/bin/env node
/**
 * Redis per page, unsharded and sharded (issue 22): the same crawl (plain pages over many loopback hosts, the crawler
 * in this process) against a private single redis-server with QUEUE_SHARDS=1 (today's deployment, the reference), a
 * private Redis Cluster (3 masters + 3 replicas) with QUEUE_SHARDS=1, and the same cluster with QUEUE_SHARDS=3.
 * For each crawl: Redis commands per page and Redis CPU per page (INFO commandstats and INFO cpu of every master,
 * replicas not counted), and the busiest master's share. Variants alternate within a round; ratios are to the
 * reference of the same round, then the median over rounds is printed.
 *
 *   node bench/dist/redis-shards-bench.js --hosts 40 --pages-per-host 25 --rounds 2
 */
import { parseArgs } from 'node:util';
import { parseWithUsage } from './cli-args.js';
import { createTestDatabase } from '@crawler/db/testing';
import { createRuntime, loadConfig } from '@crawler/pipeline';
import { startPrivateRedis, startPrivateRedisCluster, startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadavg } from 'node:os';

const run = promisify(execFile);

const USAGE = `usage: node bench/dist/redis-shards-bench.js [--hosts 40] [--pages-per-host 25] [--rounds 2] [--concurrency 16]`;

interface RedisCounters {
  calls: number;
  cpuMs: number;
  byCommand: Map<string, number>;
}

async function counters(port: number): Promise<RedisCounters> {
  const cli = async (...args: string[]) => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;
  const stats = await cli('info', 'commandstats');
  const cpu = await cli('info', 'cpu');
  const byCommand = new Map<string, number>();
  for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) byCommand.set(m[1]!, Number(m[2]));
  const sec = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
  return { calls: [...byCommand.values()].reduce((a, b) => a + b, 0), cpuMs: (sec('used_cpu_user') + sec('used_cpu_sys')) * 1000, byCommand };
}

interface Measurement {
  variant: string;
  pages: number;
  wallMs: number;
  commandsPerPage: number;
  cpuMsPerPage: number;
  /** The busiest master's share of commands (1 = one master does everything). */
  busiestShare: number;
  /** Redis CPU per page of the busiest master: what caps the fleet's pages/s. */
  busiestCpuMsPerPage: number;
  top: string;
}

async function crawl(variant: string, target: { url?: string; seeds?: string[]; masters: () => Promise<number[]> }, shards: number, urls: string[], concurrency: number, seq: number): Promise<Measurement> {
  const db = await createTestDatabase(`bench_shards_${seq}`);
  const config = loadConfig({
    DATABASE_URL: db.url,
    ...(target.url ? { REDIS_URL: target.url } : { REDIS_CLUSTER_NODES: target.seeds!.join(',') }),
    QUEUE_PREFIX: `{bench_shards_${seq}}`,
    QUEUE_SHARDS: String(shards),
    ALLOW_PRIVATE_NETWORKS: 'true',
    FETCHERS: `simple_http:${concurrency}`,
    ROBOTS_ENABLED: 'false',
    DOMAIN_MIN_DELAY_MS: '0',
    DOMAIN_MAX_CONCURRENCY: String(concurrency),
    LOG_LEVEL: 'silent',
  });
  const runtime = createRuntime(config, { prisma: db.prisma });
  try {
    const ports = await target.masters();
    const before = await Promise.all(ports.map(counters));
    const started = performance.now();
    await runtime.enqueue(urls);
    runtime.startWorkers();
    await runtime.waitUntilIdle({ pollMs: 200 });
    const wallMs = performance.now() - started;
    const after = await Promise.all(ports.map(counters));
    const done = await db.prisma.link.count({ where: { status: 'done' } });
    if (done !== urls.length) throw new Error(`${variant}: ${done} of ${urls.length} links done`);
    const calls = after.map((a, i) => a.calls - before[i]!.calls);
    const cpu = after.map((a, i) => a.cpuMs - before[i]!.cpuMs);
    const totalCalls = calls.reduce((a, b) => a + b, 0);
    const byCommand = new Map<string, number>();
    after.forEach((a, i) => {
      for (const [c, n] of a.byCommand) byCommand.set(c, (byCommand.get(c) ?? 0) + n - (before[i]!.byCommand.get(c) ?? 0));
    });
    const top = [...byCommand].sort((x, y) => y[1] - x[1]).slice(0, 4).map(([c, n]) => `${c} ${(n / urls.length).toFixed(1)}`).join(', ');
    return {
      variant,
      pages: urls.length,
      wallMs,
      commandsPerPage: totalCalls / urls.length,
      cpuMsPerPage: cpu.reduce((a, b) => a + b, 0) / urls.length,
      busiestShare: Math.max(...calls) / totalCalls,
      busiestCpuMsPerPage: Math.max(...cpu) / urls.length,
      top,
    };
  } finally {
    await runtime.close({ drainTimeoutMs: 2_000 });
    await db.drop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function main(): Promise<void> {
  const { values } = parseWithUsage('redis-shards-bench', USAGE, () => parseArgs({ options: { hosts: { type: 'string', default: '40' }, 'pages-per-host': { type: 'string', default: '25' }, rounds: { type: 'string', default: '2' }, concurrency: { type: 'string', default: '16' }, help: { type: 'boolean' } } }));
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  const hosts = Number(values.hosts);
  const perHost = Number(values['pages-per-host']);
  const rounds = Number(values.rounds);
  const concurrency = Number(values.concurrency);
  const servers: TestServer[] = await Promise.all(
    Array.from({ length: hosts }, (_, h) => startTestServer({ '/b/*': (req, res) => res.end(staticArticle({ title: `Bench ${h} ${req.url}` })) }, { host: `127.0.25.${h + 1}` })),
  );
  const single = await startPrivateRedis();
  const cluster = await startPrivateRedisCluster();
  const clusterMasters = async () => (await cluster.masters()).map((m) => m.port);
  const variants = [
    { name: 'single redis, 1 shard (reference)', target: { url: single.url, masters: async () => [single.port] }, shards: 1 },
    { name: 'cluster 3+3, 1 shard', target: { seeds: [...cluster.seeds], masters: clusterMasters }, shards: 1 },
    { name: 'cluster 3+3, 3 shards', target: { seeds: [...cluster.seeds], masters: clusterMasters }, shards: 3 },
  ];
  const results: Measurement[][] = variants.map(() => []);
  let seq = 0;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [i, v] of variants.entries()) {
        seq += 1;
        const urls = servers.flatMap((s) => Array.from({ length: perHost }, (_, p) => s.url(`/b/${seq}/${p}`)));
        const m = await crawl(v.name, v.target, v.shards, urls, concurrency, seq);
        results[i]!.push(m);
        process.stderr.write(`round ${r + 1} ${v.name}: ${(m.pages / (m.wallMs / 1000)).toFixed(1)} pages/s, ${m.commandsPerPage.toFixed(1)} cmd/page, ${m.cpuMsPerPage.toFixed(3)} ms Redis CPU/page, busiest master ${(100 * m.busiestShare).toFixed(0)} % of commands, ${m.busiestCpuMsPerPage.toFixed(3)} ms CPU/page\n`);
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.close()));
    await single.close();
    await cluster.close();
  }
  const lines = [
    `${hosts} hosts × ${perHost} pages = ${hosts * perHost} pages per crawl, concurrency ${concurrency}, ${rounds} rounds (median), load average ${loadavg()[0]!.toFixed(1)} (shared machine)`,
    '',
    '| variant | Redis commands/page | Redis CPU ms/page (all masters) | CPU vs reference | busiest master: commands share, CPU ms/page | busiest master CPU vs reference | pages/s vs reference | top commands/page |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [i, v] of variants.entries()) {
    const ms = results[i]!;
    const ratio = (f: (m: Measurement, ref: Measurement) => number) => median(ms.map((m, r) => f(m, results[0]![r]!)));
    lines.push(
      `| ${v.name} | ${median(ms.map((m) => m.commandsPerPage)).toFixed(1)} | ${median(ms.map((m) => m.cpuMsPerPage)).toFixed(3)} | ${ratio((m, ref) => m.cpuMsPerPage / ref.cpuMsPerPage).toFixed(2)} | ${(100 * median(ms.map((m) => m.busiestShare))).toFixed(0)} %, ${median(ms.map((m) => m.busiestCpuMsPerPage)).toFixed(3)} | ${ratio((m, ref) => m.busiestCpuMsPerPage / ref.busiestCpuMsPerPage).toFixed(2)} | ${ratio((m, ref) => ref.wallMs / m.wallMs).toFixed(2)} | ${ms[ms.length - 1]!.top} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
