/**
 * `crawl explain` with REDIS_CLUSTER_NODES: it reads the fleet's pauses from the cluster, as every other command
 * does, not from REDIS_URL (here an address where nothing listens). A private three-master cluster, never the shared Redis.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { loadConfig } from '@crawler/pipeline';
import { RedisPolitenessGate } from '@crawler/politeness';
import { closeRedisConnection, createRedisConnection } from '@crawler/queue';
import { startPrivateRedisCluster, type PrivateRedisCluster } from '@crawler/testkit';
import type { CommandIO } from '../command.js';
import explain from './explain.js';

const PREFIX = '{crawler_test_cli_explain_cluster}';
let db: TestDatabase;
let cluster: PrivateRedisCluster;
let env: Record<string, string>;

beforeAll(async () => {
  [db, cluster] = await Promise.all([createTestDatabase('cli_explain_cluster'), startPrivateRedisCluster({ masters: 3, replicasPerMaster: 0 })]);
  env = { DATABASE_URL: db.url, REDIS_CLUSTER_NODES: cluster.seeds.join(','), REDIS_URL: 'redis://127.0.0.1:1', QUEUE_PREFIX: PREFIX, LOG_LEVEL: 'silent' };
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await db?.drop();
});

describe('crawl explain on a Redis Cluster', () => {
  it("shows the domain's fleet-wide pause kept on the cluster", async () => {
    const redis = createRedisConnection(loadConfig(env).redisTarget, 'producer');
    try {
      await new RedisPolitenessGate({ redis: redis as never, prefix: `${PREFIX}:polite:` }).pauseDomain('paused.example', Date.now() + 3_600_000, 'blocked');
    } finally {
      await closeRedisConnection(redis);
    }
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (d) => (out += String(d)));
    const io: CommandIO = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env };
    expect(await explain.run(['--json', 'https://paused.example/a'], io)).toBe(0);
    expect((JSON.parse(out) as { pause: unknown }).pause).toMatchObject({ reason: 'blocked' });
  }, 60_000);
});
