import { parseArgs } from 'node:util';
import type { ExitTier } from '@crawler/core';
import { AttemptStore, LinkStore, createPrismaClient, type AttemptStats, type LinkBacklog, type ProxyStats, type VelocityBucket } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, closeRedisConnection, createRedisConnection, fetchQueueName } from '@crawler/queue';
import { DomainPauses, type DomainPauseView } from '@crawler/pipeline';
import { UsageError, type Command } from '../command.js';
import { checkRedisDatabase, reportingConfigFrom } from '../crawler/cli-context.js';

const USAGE = 'usage: crawl stats [--days N] [--hours N] [--domains N] [--recent-minutes N] [--json]';

/** Jobs of one queue by state, and the workers connected to it (0 with jobs waiting: nobody serves the queue). */
export type QueueDepth = Record<'waiting' | 'active' | 'delayed' | 'failed', number> & { workers?: number };

/** One hour of learning velocity: a learned decision is a probe the crawler did not have to send. */
export interface VelocityRow extends VelocityBucket {
  probesSaved: number;
}

/** One exit tier's attempts and what they cost. */
export interface TierStats extends AttemptStats {
  /** Cost units spent: attempts × the tier's cost (null: the tier is not configured any more). */
  costUnits: number | null;
}

/** One proxy's attempts (`key`: the proxy masked, `http://***@host:port`) and what they cost. */
export interface ProxyRow extends ProxyStats {
  /** Cost units spent: attempts × its tier's cost (null: the tier is not configured any more). */
  costUnits: number | null;
}

/** Everything `crawl stats` shows. */
export interface StatsReport {
  sinceDays: number;
  byFetcher: AttemptStats[];
  byDomain: AttemptStats[];
  /** Per exit tier, with the cost units its requests cost (attempts × the tier's PROXY_TIERS cost). */
  byTier: TierStats[];
  /** Per proxy of each tier, from the attempts that named their proxy, busiest first. */
  byProxy: ProxyRow[];
  queues: Record<string, QueueDepth>;
  /** Over the velocity window: how attempts were routed. */
  decisions: { attempts: number; learned: number; probes: number; learnedShare: number; probesSaved: number };
  velocityHours: number;
  velocity: VelocityRow[];
  /** Domains paused now (crawl pauses): reason, until, links waiting. */
  paused: DomainPauseView[];
  /** The last few minutes: attempts per fetcher (with their rate per second) and failures per error type. */
  recent: RecentActivity | null;
  /** Links not finished yet, by status and by the domains holding most of them. */
  backlog: LinkBacklog | null;
}

/** What the fleet did in the last `minutes` minutes, from the attempt log (every worker's attempts). */
export interface RecentActivity {
  minutes: number;
  byFetcher: AttemptStats[];
  /** Failed attempts by error type, most first. */
  errors: AttemptStats[];
}

/** A line under the queue table for each queue with jobs waiting and no worker connected. */
function unservedNote(queues: Record<string, QueueDepth>): string {
  const lines = Object.entries(queues)
    .filter(([, d]) => d.workers === 0 && d.waiting > 0)
    .map(([q, d]) => `\n  ${q}: ${d.waiting} jobs waiting and no worker connected: nothing moves them until a process serves this queue`);
  return lines.join('');
}

/** Assemble the report from what the stores and queues returned (pure, so it is unit-tested without a database). */
export function buildStatsReport(input: {
  sinceDays: number;
  velocityHours: number;
  byFetcher: AttemptStats[];
  byDomain: AttemptStats[];
  byTier?: AttemptStats[];
  byProxy?: ProxyStats[];
  tiers?: readonly ExitTier[];
  queues: Record<string, QueueDepth>;
  velocity: VelocityBucket[];
  paused?: DomainPauseView[];
  recent?: RecentActivity;
  backlog?: LinkBacklog;
}): StatsReport {
  const velocity = input.velocity.map((b) => ({ ...b, probesSaved: b.learned }));
  const attempts = velocity.reduce((n, b) => n + b.attempts, 0);
  const learned = velocity.reduce((n, b) => n + b.learned, 0);
  const probes = velocity.reduce((n, b) => n + b.probes, 0);
  return {
    sinceDays: input.sinceDays,
    byFetcher: input.byFetcher,
    byDomain: input.byDomain,
    byTier: (input.byTier ?? []).map((t) => {
      const tier = input.tiers?.find((x) => x.name === t.key);
      return { ...t, costUnits: tier ? t.attempts * tier.cost : null };
    }),
    byProxy: (input.byProxy ?? []).map((p) => {
      const tier = input.tiers?.find((x) => x.name === p.tier);
      return { ...p, costUnits: tier ? p.attempts * tier.cost : null };
    }),
    queues: input.queues,
    decisions: { attempts, learned, probes, learnedShare: attempts ? learned / attempts : 0, probesSaved: learned },
    velocityHours: input.velocityHours,
    velocity,
    paused: input.paused ?? [],
    recent: input.recent ?? null,
    backlog: input.backlog ?? null,
  };
}

/** Left-align the first column, right-align the rest: a plain-text table for a terminal. */
export function formatTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => cells.reduce((w, r) => Math.max(w, (r[i] ?? '').length), 0));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(cells[0]!), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join('\n');
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const units = (x: number | null) => (x === null ? 'n/a' : String(Math.round(x * 100) / 100));

function rateTable(title: string, keyName: string, rows: AttemptStats[]): string {
  if (rows.length === 0) return `${title}\n  (no attempts)`;
  return `${title}\n${formatTable([keyName, 'attempts', 'success', 'banned'], rows.map((r) => [r.key, r.attempts, pct(r.successRate), pct(r.banRate)]))}`;
}

function recentSection(r: RecentActivity): string {
  const title = `Last ${r.minutes} minutes (all workers, from the attempt log)`;
  if (r.byFetcher.length === 0) return `${title}\n  (no attempts: nothing fetched in ${r.minutes} minutes)`;
  const perSecond = (n: number) => (n / (r.minutes * 60)).toFixed(2);
  const all = r.byFetcher.reduce((a, f) => ({ attempts: a.attempts + f.attempts, successes: a.successes + f.successes, banned: a.banned + f.banned }), { attempts: 0, successes: 0, banned: 0 });
  const rows = [...r.byFetcher.map((f) => [f.key, f.attempts, perSecond(f.attempts), perSecond(f.successes), pct(f.successRate), pct(f.banRate)]), ['all', all.attempts, perSecond(all.attempts), perSecond(all.successes), pct(all.successes / all.attempts), pct(all.banned / all.attempts)]];
  const errors = r.errors.length === 0 ? '  errors: none' : `  errors: ${r.errors.map((e) => `${e.key} ${e.attempts} (${perSecond(e.attempts)}/s)`).join(', ')}`;
  return `${title}\n${formatTable(['fetcher', 'attempts', 'per s', 'pages/s', 'success', 'banned'], rows)}\n${errors}`;
}

function backlogSection(b: LinkBacklog): string {
  const s = b.byStatus;
  const head = `Backlog: ${b.total} unfinished links (queued ${s.queued}, routing ${s.routing}, fetching ${s.fetching}, paused ${s.paused})`;
  if (b.topDomains.length === 0) return head;
  // A routed link reads `fetching` from the router's decision until its page is stored, so most of a big site's
  // backlog is `fetching` while it waits for its politeness turns (the fetch queues' delayed jobs, below).
  return `${head}\n  (fetching = routed to its fetcher: being fetched, or waiting for its site's politeness turn)\n${formatTable(['domain', 'unfinished', 'queued', 'routing', 'fetching', 'paused'], b.topDomains.map((d) => [d.domain, d.total, d.queued, d.routing, d.fetching, d.paused]))}`;
}

/** The report as terminal text. */
export function formatStatsReport(r: StatsReport): string {
  const parts = [
    ...(r.recent ? [recentSection(r.recent)] : []),
    ...(r.backlog ? [backlogSection(r.backlog)] : []),
    rateTable(`By fetcher (last ${r.sinceDays} days)`, 'fetcher', r.byFetcher),
    rateTable(`By domain (last ${r.sinceDays} days, busiest first)`, 'domain', r.byDomain),
    r.byTier.length === 0
      ? `By exit tier (last ${r.sinceDays} days)\n  (no attempts)`
      : `By exit tier (last ${r.sinceDays} days; cost units = attempts × tier cost)\n${formatTable(['tier', 'attempts', 'success', 'banned', 'cost units'], r.byTier.map((t) => [t.key, t.attempts, pct(t.successRate), pct(t.banRate), units(t.costUnits)]))}`,
    r.byProxy.length === 0
      ? `By proxy (last ${r.sinceDays} days)\n  (no proxied attempts)`
      : `By proxy (last ${r.sinceDays} days, busiest first)\n${formatTable(['proxy', 'tier', 'attempts', 'success', 'banned', 'cost units'], r.byProxy.map((p) => [p.key, p.tier, p.attempts, pct(p.successRate), pct(p.banRate), units(p.costUnits)]))}`,
    r.paused.length === 0
      ? 'Paused domains\n  (none)'
      : `Paused domains (crawl pauses lift <domain> ends one)\n${formatTable(['domain', 'reason', 'domain paused until', 'last link resumes', 'paused links'], r.paused.map((p) => [p.domain, p.reason ?? '-', p.domainPausedUntil ?? '-', p.until, p.pausedLinks]))}`,
    `Queues\n${formatTable(['queue', 'waiting', 'active', 'delayed', 'failed', 'workers'], Object.entries(r.queues).map(([q, d]) => [q, d.waiting, d.active, d.delayed, d.failed, d.workers ?? '-']))}${unservedNote(r.queues)}`,
    `Decisions (last ${r.velocityHours} h): ${r.decisions.attempts} attempts, ${pct(r.decisions.learnedShare)} learned, ${r.decisions.probes} probes, ${r.decisions.probesSaved} probes saved`,
    r.velocity.length === 0
      ? `Learning velocity per hour\n  (no attempts)`
      : `Learning velocity per hour\n${formatTable(['hour (UTC)', 'attempts', 'learned', 'probes', 'learned share', 'probes saved'], r.velocity.map((b) => [b.bucketStart.toISOString().slice(0, 13).replace('T', ' ') + ':00', b.attempts, b.learned, b.probes, pct(b.learnedShare), b.probesSaved]))}`,
  ];
  return `${parts.join('\n\n')}\n`;
}

function positiveInt(name: string, value: string | undefined, def: number): number {
  if (value === undefined) return def;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer (got ${JSON.stringify(value)})\n${USAGE}`);
  return n;
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let values;
    try {
      ({ values } = parseArgs({ args, options: { json: { type: 'boolean' }, days: { type: 'string' }, hours: { type: 'string' }, domains: { type: 'string' }, 'recent-minutes': { type: 'string' } } }));
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    const sinceDays = positiveInt('days', values.days, 7);
    const velocityHours = positiveInt('hours', values.hours, 24);
    const domainLimit = positiveInt('domains', values.domains, 20);
    const recentMinutes = positiveInt('recent-minutes', values['recent-minutes'], 5);
    const config = reportingConfigFrom(io);
    const prisma = createPrismaClient(config.databaseUrl);
    const redis = createRedisConnection(config.redisTarget, 'producer');
    const queues = new JobQueues({ connection: redis, prefix: config.queuePrefix, shards: config.queueShards });
    try {
      await checkRedisDatabase(redis);
      // The queues' reads wait for a Redis that is down for good (BullMQ waits for the connection): a PING on this
      // producer connection gives up after its reconnect attempts instead, and the command says so.
      await redis.ping();
      const store = new AttemptStore({ prisma });
      const depths: Record<string, QueueDepth> = {};
      // One row per queue per shard (`route@s1`) when the queues are sharded.
      const names = [ROUTE_QUEUE, ...config.fetchers.map((f) => fetchQueueName(f.name))];
      const counts = await queues.queueDepths(names, ['waiting', 'active', 'delayed', 'failed', 'prioritized']);
      const workers = await queues.workerCounts(names);
      for (const [name, c] of Object.entries(counts)) {
        depths[name] = { waiting: (c.waiting ?? 0) + (c.prioritized ?? 0), active: c.active ?? 0, delayed: c.delayed ?? 0, failed: c.failed ?? 0, workers: workers[name] ?? 0 };
      }
      const report = buildStatsReport({
        sinceDays,
        velocityHours,
        byFetcher: await store.statsByFetcher({ sinceDays }),
        byDomain: await store.statsByDomain({ sinceDays, limit: domainLimit }),
        byTier: await store.statsByTier({ sinceDays }),
        byProxy: await store.statsByProxy({ sinceDays }),
        tiers: config.exitTiers,
        queues: depths,
        velocity: await store.learningVelocity({ sinceHours: velocityHours, bucket: 'hour' }),
        paused: await new DomainPauses({ redis, prisma, config }).list(),
        recent: { minutes: recentMinutes, byFetcher: await store.statsByFetcher({ sinceMinutes: recentMinutes }), errors: await store.errorsByType({ sinceMinutes: recentMinutes }) },
        backlog: await new LinkStore(prisma).backlog(domainLimit),
      });
      io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : formatStatsReport(report));
      return 0;
    } finally {
      await queues.close();
      await closeRedisConnection(redis);
      await prisma.$disconnect();
    }
  },
};

export default command;
