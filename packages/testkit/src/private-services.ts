/**
 * Private Redis and Postgres instances for fault tests and the chaos script: a `redis-server` and an `initdb`
 * cluster on free loopback ports and in temp directories, which a test may stop, restart or empty without touching
 * the machine's shared services.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A free TCP port on loopback (bound and released; good enough for a test's own servers). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Arguments for a private redis-server that serves a replica's full sync at once. Redis waits 5 s by default
 * (`repl-diskless-sync-delay`) before streaming a diskless sync, for more replicas to join it: every replica a test
 * attaches (a sentinel's, one made by REPLICAOF) then stands 5 s in sync, which the tests only wait out.
 */
export const REPLICA_SYNC_AT_ONCE = ['--repl-diskless-sync-delay', '0'] as const;

/** A redis-server of our own, without persistence: a restart loses every key, as a failover to a stale replica would. */
/** Whether a child process is still running. */
export const isRunning = (p: ChildProcess | undefined): boolean => p !== undefined && p.exitCode === null && p.signalCode === null;

/**
 * The processes of a private multi-node service (a cluster, a sentinel set), by port: SIGKILLed when the test process
 * exits, and by `close`, which then removes `dir` (once; later calls do nothing).
 */
export function trackProcesses(dir: string): { procs: Map<number, ChildProcess>; close(): Promise<void> } {
  const procs = new Map<number, ChildProcess>();
  const onExit = () => {
    for (const p of procs.values()) if (isRunning(p)) p.kill('SIGKILL');
  };
  process.once('exit', onExit);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    for (const [port, p] of procs) {
      if (!isRunning(p)) continue;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGKILL');
      await exited;
      procs.delete(port);
    }
    process.removeListener('exit', onExit);
    rmSync(dir, { recursive: true, force: true });
  };
  return { procs, close };
}

export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  /** Kill it (SIGKILL) and start it again on the same port, empty. */
  restartEmpty(): Promise<void>;
  /** Kill it (SIGKILL); `start()` brings it back, empty. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** Stop it for good. Idempotent. */
  close(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'crawler-redis-'));
  let proc: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...REPLICA_SYNC_AT_ONCE], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += String(d);
        if (out.includes('Ready to accept connections')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out.slice(-500)}`)));
    });
  };
  const kill = async (): Promise<void> => {
    const p = proc;
    proc = null;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    kill,
    async restartEmpty() {
      await kill();
      await start();
    },
    async close() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Postgres cluster of our own (trust auth, user `postgres`, fsync off). */
export interface PrivatePostgres {
  readonly port: number;
  /** URL of its `postgres` database. */
  readonly url: string;
  /** Stop it (fast shutdown: connections are cut, as in a restart or failover). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Run statements as the superuser through psql, each on its own (ALTER SYSTEM refuses a transaction); resolves with the output. */
  psql(...statements: string[]): Promise<string>;
  /** A streaming replica of this cluster (pg_basebackup), started on a port of its own; read-only until promoted. */
  replica(): Promise<PrivatePostgres>;
  /** Promote a replica to primary (pg_ctl promote), waiting until it takes writes. */
  promote(): Promise<void>;
  /** Stop it and delete its files. Idempotent. */
  close(): Promise<void>;
}

/** The newest PostgreSQL server binaries on this machine (Debian layout), or `PG_BIN` when set. */
function pgBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (set PG_BIN)');
  return join(root, versions[0]!, 'bin');
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  return startCluster(null);
}

/** A new cluster (initdb), or, with `primary`, a streaming replica of it. */
async function startCluster(primary: { port: number } | null): Promise<PrivatePostgres> {
  const bin = pgBin();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'crawler-pg-'));
  const data = join(dir, 'data');
  // Postgres refuses to run as root: as root, the cluster belongs to the `postgres` user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    chmodSync(dir, 0o700);
  }
  const pg = (tool: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args));
  if (primary) await pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '--no-sync', '--checkpoint=fast']);
  else await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = async (): Promise<void> => {
    await pg('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  };
  const stop = async (): Promise<void> => {
    await pg('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  };
  const psql = async (...statements: string[]): Promise<string> => {
    const { stdout } = await run(join(bin, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-XAtq', '-v', 'ON_ERROR_STOP=1', ...statements.flatMap((st) => ['-c', st])]);
    return stdout.trim();
  };
  await start();
  let closed = false;
  return {
    port,
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    psql,
    replica: () => startCluster({ port }),
    async promote() {
      await pg('pg_ctl', ['-D', data, '-w', '-t', '60', 'promote']);
    },
    async close() {
      if (closed) return;
      closed = true;
      await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
