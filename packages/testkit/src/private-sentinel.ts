/**
 * A private Redis Sentinel deployment for fault tests: a master and a replica (`redis-server` on free loopback ports)
 * watched by one sentinel (`redis-server --sentinel`) with quorum 1 and short timeouts, so a SIGKILLed master is
 * replaced within seconds. Nothing touches the machine's shared Redis; cleanup kills only the processes this helper
 * spawned and removes only its own temp directory.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPLICA_SYNC_AT_ONCE, freePort, isRunning, trackProcesses } from './private-services.js';

const run = promisify(execFile);

const alive = isRunning;

export interface PrivateSentinelOptions {
  /** The master name the sentinel monitors. @defaultValue 'crawlermaster' */
  name?: string;
  /** `requirepass` (and `masterauth`) of the data nodes. @defaultValue none */
  password?: string;
  /** `requirepass` of the sentinel itself. @defaultValue none */
  sentinelPassword?: string;
  /** Silence after which the master is judged down (`down-after-milliseconds`). @defaultValue 1000 */
  downAfterMs?: number;
  /** `failover-timeout`. @defaultValue 3000 */
  failoverTimeoutMs?: number;
}

export interface PrivateSentinel {
  readonly name: string;
  /** The sentinel's `host:port`, for REDIS_SENTINELS. */
  readonly sentinel: string;
  readonly sentinelPort: number;
  /** Ports of the two data nodes, in start order (the first starts as master). */
  readonly dataPorts: readonly number[];
  /** The port of the master the sentinel names now. */
  masterPort(): Promise<number>;
  /** Run a redis-cli command against a data node. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** SIGKILL the data node on `port`. */
  kill(port: number): Promise<void>;
  /** Resolve with the new master's port once the sentinel names a master other than `oldPort` and it says role:master. */
  waitForFailover(oldPort: number, timeoutMs?: number): Promise<number>;
  /** Kill everything and remove the files. Idempotent. */
  close(): Promise<void>;
}

async function spawnReady(args: string[], what: string): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += String(d);
      if (out.includes('Ready to accept connections') || out.includes('Sentinel ID is')) {
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${out.slice(-500)}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return child;
}

export async function startPrivateSentinel(o: PrivateSentinelOptions = {}): Promise<PrivateSentinel> {
  const name = o.name ?? 'crawlermaster';
  const dir = mkdtempSync(join(tmpdir(), 'crawler-sentinel-'));
  const dataPorts = [await freePort(), await freePort()];
  const sentinelPort = await freePort();
  // A test runner that dies must not leave redis-servers behind: ours (only ours) are killed on exit.
  const { procs, close } = trackProcesses(dir);
  const auth = o.password ? ['--requirepass', o.password, '--masterauth', o.password] : [];
  const cli = async (port: number, ...args: string[]): Promise<string> =>
    (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...(o.password ? ['--no-auth-warning', '-a', o.password] : []), ...args])).stdout;
  const sentinelCli = async (...args: string[]): Promise<string> =>
    (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(sentinelPort), ...(o.sentinelPassword ? ['--no-auth-warning', '-a', o.sentinelPassword] : []), ...args])).stdout;


  const masterPort = async (): Promise<number> => {
    const out = (await sentinelCli('sentinel', 'get-master-addr-by-name', name)).trim().split('\n');
    return Number(out[1]);
  };

  try {
    const [master, replica] = dataPorts as [number, number];
    const base = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', `dump-${port}.rdb`, ...REPLICA_SYNC_AT_ONCE, ...auth];
    procs.set(master, await spawnReady(base(master), `redis-server :${master}`));
    procs.set(replica, await spawnReady([...base(replica), '--replicaof', '127.0.0.1', String(master)], `redis-server :${replica}`));
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        ...(o.sentinelPassword ? [`requirepass ${o.sentinelPassword}`] : []),
        `sentinel monitor ${name} 127.0.0.1 ${master} 1`,
        ...(o.password ? [`sentinel auth-pass ${name} ${o.password}`] : []),
        `sentinel down-after-milliseconds ${name} ${o.downAfterMs ?? 1_000}`,
        `sentinel failover-timeout ${name} ${o.failoverTimeoutMs ?? 3_000}`,
        `sentinel parallel-syncs ${name} 1`,
        '',
      ].join('\n'),
    );
    procs.set(sentinelPort, await spawnReady([conf, '--sentinel'], `redis-sentinel :${sentinelPort}`));
    // Ready once the replica has synced and the sentinel has found it.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const info = await cli(replica, 'info', 'replication').catch(() => '');
      const replicas = await sentinelCli('sentinel', 'replicas', name).catch(() => '');
      if (info.includes('master_link_status:up') && replicas.includes(String(replica))) break;
      if (Date.now() > deadline) throw new Error(`sentinel setup not ready: ${info.slice(0, 200)} / ${replicas.slice(0, 200)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    await close();
    throw err;
  }

  return {
    name,
    sentinel: `127.0.0.1:${sentinelPort}`,
    sentinelPort,
    dataPorts,
    masterPort,
    cli,
    async kill(port) {
      const p = procs.get(port);
      if (!p || !alive(p)) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGKILL');
      await exited;
    },
    async waitForFailover(oldPort, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const port = await masterPort().catch(() => oldPort);
        if (port !== oldPort && (await cli(port, 'info', 'replication').catch(() => '')).includes('role:master')) return port;
        if (Date.now() > deadline) throw new Error(`no failover from :${oldPort} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close,
  };
}
