import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateRedisCluster, type PrivateRedisCluster } from './private-cluster.js';

describe('startPrivateRedisCluster', () => {
  let cluster: PrivateRedisCluster;
  beforeAll(async () => {
    cluster = await startPrivateRedisCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('starts 3 masters covering every slot, each with a replica, and promotes the replica of a killed master', async () => {
    const masters = await cluster.masters();
    expect(masters).toHaveLength(3);
    const replicas = (await cluster.nodes()).filter((n) => n.role === 'replica');
    expect(new Set(replicas.map((r) => r.masterId))).toEqual(new Set(masters.map((m) => m.id)));
    const victim = masters[1]!;
    const heir = replicas.find((r) => r.masterId === victim.id)!;
    await cluster.kill(victim.port);
    await cluster.waitHealthy();
    const after = await cluster.masters();
    expect(after.map((m) => m.port).sort()).toEqual([masters[0]!.port, masters[2]!.port, heir.port].sort());
    expect(await cluster.cli(heir.port, 'set', '{t}x', '1')).toMatch(/OK|MOVED/);
  }, 60_000);

  it('leaves nothing running after close', async () => {
    const ports = [...cluster.ports];
    await cluster.close();
    for (const p of ports) await expect(cluster.cli(p, 'ping')).rejects.toThrow();
  }, 30_000);
});
