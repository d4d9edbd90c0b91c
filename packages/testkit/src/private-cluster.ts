/**
 * A private Redis Cluster for fault tests and benchmarks: `redis-server --cluster-enabled yes` processes on free
 * loopback ports (masters plus one replica each), joined by `redis-cli --cluster create`. A test may SIGKILL a master
 * and watch its replica take over; nothing touches the machine's shared Redis. Cleanup kills only the processes this
 * helper spawned and removes only its own temp directory.
 */
import { spawn, execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPLICA_SYNC_AT_ONCE, freePort, isRunning, trackProcesses } from './private-services.js';

const run = promisify(execFile);

/** Still running: a process killed by a signal keeps `exitCode` null and gets a `signalCode`. */
const alive = isRunning;

/** One node as CLUSTER NODES reports it. */
export interface ClusterNodeState {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** The master's id, for a replica. */
  masterId: string | null;
  /** Failed or unreachable as the reporting node sees it. */
  failed: boolean;
  /** Slot ranges `[first, last]` a master serves. */
  slots: Array<[number, number]>;
}

export interface PrivateRedisCluster {
  /** Every node's port, in start order. */
  readonly ports: readonly number[];
  /** Seed nodes for REDIS_CLUSTER_NODES: `127.0.0.1:<port>` of every node. */
  readonly seeds: readonly string[];
  /** CLUSTER NODES as seen from a live node. */
  nodes(): Promise<ClusterNodeState[]>;
  /** The live masters serving slots. */
  masters(): Promise<ClusterNodeState[]>;
  /** Run a redis-cli command against one node and return its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** SIGKILL the node on `port` (no shutdown, no save): its replica must take over. */
  kill(port: number): Promise<void>;
  /** Start the killed node on `port` again, empty (nothing is saved), with its cluster config: it rejoins as it was. */
  restart(port: number): Promise<void>;
  /** Resolve when every slot is served by a live master and every live node says cluster_state:ok. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** Kill every node and remove the files. Idempotent. */
  close(): Promise<void>;
}

export interface PrivateRedisClusterOptions {
  /** Masters. @defaultValue 3 */
  masters?: number;
  /** Replicas per master. @defaultValue 1 */
  replicasPerMaster?: number;
  /**
   * Milliseconds before a silent master is judged failed and its replica promoted (`cluster-node-timeout`); short so
   * a failover test takes seconds. @defaultValue 2000
   */
  nodeTimeoutMs?: number;
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = await freePort();
    if (port + 10_000 > 65_535 || taken.has(port) || taken.has(port + 10_000)) continue;
    // The bus port must be bindable as well; a quick probe by binding it.
    const bus = await new Promise<boolean>((resolve) => {
      import('node:net').then(({ createServer }) => {
        const srv = createServer();
        srv.once('error', () => resolve(false));
        srv.listen(port + 10_000, '127.0.0.1', () => srv.close(() => resolve(true)));
      });
    });
    if (!bus) continue;
    taken.add(port);
    taken.add(port + 10_000);
    return port;
  }
  throw new Error('no free port pair for a cluster node');
}

function parseNodes(text: string): ClusterNodeState[] {
  return text
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const [id, addr, flags, master, , , , , ...slots] = line.trim().split(/\s+/);
      const f = flags!.split(',');
      return {
        id: id!,
        port: Number(/:(\d+)@/.exec(addr!)?.[1] ?? 0),
        role: f.includes('master') ? 'master' : 'replica',
        masterId: master === '-' ? null : master!,
        failed: f.includes('fail') || f.includes('fail?') || f.includes('noaddr'),
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [a, b] = s.split('-');
            return [Number(a), Number(b ?? a)] as [number, number];
          }),
      };
    });
}

/** Start a cluster: spawn the nodes, create the cluster, wait until it is healthy. */
export async function startPrivateRedisCluster(o: PrivateRedisClusterOptions = {}): Promise<PrivateRedisCluster> {
  const masters = o.masters ?? 3;
  const replicas = o.replicasPerMaster ?? 1;
  const count = masters * (1 + replicas);
  const dir = mkdtempSync(join(tmpdir(), 'crawler-redis-cluster-'));
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freeClusterPort(taken));
  // A test runner that dies must not leave redis-servers behind: ours (only ours) are killed on exit.
  const { procs, close } = trackProcesses(dir);

  const startNode = async (port: number): Promise<void> => {
    const nodeDir = join(dir, String(port));
    mkdirSync(nodeDir, { recursive: true });
    const child = spawn(
      'redis-server',
      [
        '--port', String(port),
        '--bind', '127.0.0.1',
        '--cluster-enabled', 'yes',
        '--cluster-config-file', join(nodeDir, 'nodes.conf'),
        '--cluster-node-timeout', String(o.nodeTimeoutMs ?? 2_000),
        // A replica however far behind still takes over: a master lost for good must not leave its slots unserved.
        '--cluster-replica-validity-factor', '0',
        '--save', '',
        '--appendonly', 'no',
        '--dir', nodeDir,
        ...REPLICA_SYNC_AT_ONCE,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    procs.set(port, child);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += String(d);
        if (out.includes('Ready to accept connections')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`redis-server :${port} exited (${code}): ${out.slice(-500)}`)));
    });
    child.stdout!.resume();
    child.stderr!.resume();
  };

  const cli = async (port: number, ...args: string[]): Promise<string> => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;
  const live = () => ports.filter((p) => alive(procs.get(p)));
  const nodes = async (): Promise<ClusterNodeState[]> => {
    for (const port of live()) {
      try {
        return parseNodes(await cli(port, 'cluster', 'nodes'));
      } catch {
        // try the next node
      }
    }
    throw new Error('no live cluster node answers');
  };
  const waitHealthy = async (timeoutMs = 30_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      try {
        const states = await Promise.all(live().map((p) => cli(p, 'cluster', 'info')));
        const all = await nodes();
        // A node we killed counts as gone at once, before the others notice (after cluster-node-timeout).
        const covered = all.filter((n) => n.role === 'master' && !n.failed && alive(procs.get(n.port))).reduce((sum, n) => sum + n.slots.reduce((s, [a, b]) => s + b - a + 1, 0), 0);
        if (states.every((s) => s.includes('cluster_state:ok')) && covered === 16_384) return;
        last = `covered ${covered}, states ${states.map((s) => /cluster_state:(\w+)/.exec(s)?.[1]).join(',')}`;
      } catch (err) {
        last = String(err);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`cluster not healthy after ${timeoutMs} ms: ${last}`);
  };


  try {
    await Promise.all(ports.map(startNode));
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes']);
    await waitHealthy();
    // Replicas attach a moment after the slots are covered: wait until every master has its replicas.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const all = await nodes();
      if (all.filter((n) => n.role === 'replica').length === masters * replicas) break;
      if (Date.now() > deadline) throw new Error('replicas did not attach');
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    await close();
    throw err;
  }

  return {
    ports,
    seeds: ports.map((p) => `127.0.0.1:${p}`),
    nodes,
    masters: async () => (await nodes()).filter((n) => n.role === 'master' && !n.failed && alive(procs.get(n.port)) && n.slots.length > 0),
    cli,
    async kill(port) {
      const p = procs.get(port);
      if (!p || !alive(p)) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGKILL');
      await exited;
    },
    async restart(port) {
      if (alive(procs.get(port))) throw new Error(`node :${port} is running`);
      await startNode(port);
    },
    waitHealthy,
    close,
  };
}
