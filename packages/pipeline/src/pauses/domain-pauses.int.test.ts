/**
 * Paused domains with sharded queues (QUEUE_SHARDS > 1): the workers keep each domain's pause under its shard's prefix,
 * so the operator's view (`crawl pauses`, GET /pauses, `crawl stats`, `crawl explain`) must read every shard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { RedisPolitenessGate, ShardedPolitenessGate } from '@crawler/politeness';
import { JobQueues, closeRedisConnection, createRedisConnection, deleteRedisPrefix, shardOfDomain } from '@crawler/queue';
import { REDIS_URL, startPrivateRedisCluster } from '@crawler/testkit';
import { loadConfig, type CrawlerConfig } from '../config/crawler-config.js';
import { DomainPauses } from './domain-pauses.js';

const PREFIX = `{crawler_test_pauses_shards_${process.pid}}`;
const SHARDS = 4;

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let config: CrawlerConfig;
/** The fleet's gate as the workers build it (create-runtime.ts): one gate per shard prefix. */
let fleet: ShardedPolitenessGate;

beforeAll(async () => {
  db = await createTestDatabase('pauses_shards');
  redis = createRedisConnection(REDIS_URL, 'producer');
  config = loadConfig({ DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, QUEUE_SHARDS: String(SHARDS) });
  queues = new JobQueues({ connection: redis, prefix: PREFIX, shards: SHARDS });
  fleet = new ShardedPolitenessGate({
    gates: queues.prefixes.map((prefix) => new RedisPolitenessGate({ redis, prefix: `${prefix}:polite:` })),
    shardOf: (domain) => shardOfDomain(domain, SHARDS),
  });
}, 60_000);

afterAll(async () => {
  await queues?.close();
  for (const p of queues?.prefixes ?? []) await deleteRedisPrefix(redis, `${p}:`);
  if (redis) await closeRedisConnection(redis);
  await db?.drop();
});

/** One domain on each shard: site0.example, site1.example… until every shard has one. */
function oneDomainPerShard(): string[] {
  const byShard = new Map<number, string>();
  for (let i = 0; byShard.size < SHARDS; i++) {
    const d = `site${i}.example`;
    const shard = shardOfDomain(d, SHARDS);
    if (!byShard.has(shard)) byShard.set(shard, d);
  }
  return [...byShard.entries()].sort(([a], [b]) => a - b).map(([, d]) => d);
}

describe('DomainPauses with QUEUE_SHARDS=4', () => {
  it('lists, shows and lifts the pause of a domain on every shard, not only shard 0', async () => {
    const domains = oneDomainPerShard();
    expect(domains.map((d) => shardOfDomain(d, SHARDS))).toEqual([0, 1, 2, 3]);
    const until = Date.now() + 3_600_000;
    for (const [i, d] of domains.entries()) await fleet.pauseDomain(d, until + i * 1_000, 'rate_limited');

    const pauses = new DomainPauses({ redis, prisma: db.prisma, queues, config });
    const listed = await pauses.list();
    expect(listed.map((p) => p.domain).sort()).toEqual([...domains].sort());
    for (const p of listed) expect(p).toMatchObject({ reason: 'rate_limited', pausedLinks: 0, domainPausedUntil: p.until });

    // `crawl explain` asks for one domain: the one on shard 3 is paused too.
    const last = domains[SHARDS - 1]!;
    expect(await pauses.pauseOf(last)).toEqual({ reason: 'rate_limited', until: new Date(until + (SHARDS - 1) * 1_000).toISOString() });
    expect(await pauses.pauseOf(`www.${last}`)).not.toBeNull();

    // Lifting ends the pause the workers see, on the domain's own shard.
    expect(await pauses.lift(last)).toEqual({ domain: last, domainPauseLifted: true, linksResumed: 0 });
    expect(await fleet.domainPausedUntil(last)).toBeNull();
    expect((await pauses.list()).map((p) => p.domain).sort()).toEqual(domains.slice(0, SHARDS - 1).sort());
  });
});

describe('DomainPauses on a Redis Cluster with QUEUE_SHARDS=3', () => {
  it('lists the pauses kept on every master, not only the node a SCAN happens to reach', async () => {
    const cluster = await startPrivateRedisCluster({ masters: 3, replicasPerMaster: 0 });
    const clusterConfig = loadConfig({ DATABASE_URL: db.url, REDIS_CLUSTER_NODES: cluster.seeds.join(','), QUEUE_PREFIX: PREFIX, QUEUE_SHARDS: '3' });
    const client = createRedisConnection(clusterConfig.redisTarget, 'producer');
    try {
      const shards = new JobQueues({ connection: client as never, prefix: PREFIX, shards: 3 });
      const gate = new ShardedPolitenessGate({
        gates: shards.prefixes.map((prefix) => new RedisPolitenessGate({ redis: client as never, prefix: `${prefix}:polite:` })),
        shardOf: (domain) => shardOfDomain(domain, 3),
      });
      const domains: string[] = [];
      for (let i = 0; new Set(domains.map((d) => shardOfDomain(d, 3))).size < 3; i++) domains.push(`site${i}.example`);
      for (const d of domains) await gate.pauseDomain(d, Date.now() + 3_600_000, 'blocked_403');
      // Three shards on three masters: a node-local SCAN sees at most one shard's pauses.
      const pauses = new DomainPauses({ redis: client as never, prisma: db.prisma, config: clusterConfig });
      for (let round = 0; round < 3; round++) expect((await pauses.list()).map((p) => p.domain).sort()).toEqual([...domains].sort());
      await shards.close();
    } finally {
      await closeRedisConnection(client);
      await cluster.close();
    }
  }, 120_000);
});
