import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';
import { showEnvValue } from '@crawler/core';

/** Who uses a connection: workers block on Redis and must never give up a command; producers should fail fast. */
export type ConnectionRole = 'worker' | 'producer';

/**
 * Where Redis is: one server by URL, a Redis Cluster by seed nodes (then `url` is not used), or the master a set of
 * Redis Sentinels names (then `url` gives only the password, user, database and TLS of the data nodes).
 */
export interface RedisTarget {
  /** Connection string of a single Redis (`redis://`, `rediss://`, `unix://`). */
  url: string;
  /** Seed nodes of a Redis Cluster, `host:port`; when non-empty the client is an ioredis Cluster. @defaultValue none */
  clusterNodes?: readonly string[];
  /** Redis Sentinels and the master they monitor; the client asks them for the master and follows failovers. @defaultValue none */
  sentinel?: SentinelTarget;
}

/** REDIS_SENTINELS, REDIS_SENTINEL_NAME and REDIS_SENTINEL_PASSWORD. */
export interface SentinelTarget {
  /** The sentinels, `host:port`. */
  nodes: readonly string[];
  /** The master name they monitor. */
  name: string;
  /** The sentinels' own password. @defaultValue none */
  password?: string;
}

/**
 * An ioredis client for BullMQ, the politeness gate and the stores. Workers get `maxRetriesPerRequest: null` (BullMQ
 * requires it for blocking commands: a worker must wait out a Redis restart rather than crash); producers get a small
 * retry budget so an API request fails instead of hanging when Redis is down.
 *
 * With cluster nodes it is an ioredis `Cluster` (BullMQ accepts one; see {@link createClusterConnection}). It is typed
 * `Redis` because every caller uses the single-key and same-slot commands the two share; whole-keyspace commands
 * (SCAN, KEYS, INFO) go through {@link masterNodesOf} instead.
 */
export function createRedisConnection(target: string | RedisTarget, role: ConnectionRole = 'worker', extra: RedisOptions = {}, opts: ConnectionReportOptions = {}): Redis {
  const t = typeof target === 'string' ? { url: target } : target;
  if (t.clusterNodes && t.clusterNodes.length > 0) {
    const cluster = createClusterConnection(t.clusterNodes, role, extra);
    reportRedisOutages(cluster, `cluster ${t.clusterNodes.join(',')}`, opts.logger);
    return cluster as unknown as Redis;
  }
  let address = '';
  const client = new Redis(t.url, {
    maxRetriesPerRequest: role === 'worker' ? null : 3,
    enableReadyCheck: true,
    blockingTimeout: BLOCKING_TIMEOUT_MS,
    // Reconnect forever with a capped backoff: a Redis restart must not take the fleet down.
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    reconnectOnError: (err) => reconnectOnRoleChange(err, role, address, opts.logger),
    ...(t.sentinel ? sentinelOptions(t.sentinel, t.url) : {}),
    ...extra,
  });
  address = redisUrlOf(client);
  reportRedisOutages(client, address, opts.logger);
  return client;
}

/**
 * A node that turned replica under an open connection (a failover behind a DNS name or a managed endpoint, a Sentinel
 * demoting the old master) answers every write with READONLY, and a blocked BZPOPMIN with UNBLOCKED, for as long as
 * the connection lasts: ioredis never drops it by itself, so a fleet stayed on the old master until restarted. Drop
 * it and connect again, through the name (or the sentinels), to the new master. A worker's command is sent again
 * there (2: it waits out the failover, as it waits out an outage); a producer's fails with READONLY (1: an API
 * request answers at once, and `crawl` says REDIS_URL names a replica), and its next command goes to the new master.
 * One warning per address per minute: a REDIS_URL naming a replica for good reconnects on every write.
 */
function reconnectOnRoleChange(err: Error, role: ConnectionRole, address: string, logger?: OutageLogger): boolean | 1 | 2 {
  if (!/^(READONLY|UNBLOCKED)\b/.test(err.message)) return false;
  const now = Date.now();
  if (now - (readOnlyWarnedAt.get(address) ?? 0) >= READONLY_WARN_EVERY_MS) {
    readOnlyWarnedAt.set(address, now);
    const log: OutageLogger = logger ?? { warn: (_obj, msg) => console.error(`[redis] ${msg}`) };
    log.warn({ address, error: err.message.split(' ')[0] }, `redis at ${address} is a read-only replica now (a failover?): reconnecting to reach the master`);
  }
  return role === 'worker' ? 2 : 1;
}

const readOnlyWarnedAt = new Map<string, number>();
const READONLY_WARN_EVERY_MS = 60_000;

/**
 * ioredis' Sentinel mode: on every (re)connect the client asks the sentinels, in turn, for the master's address and
 * checks the server it reaches says role:master, so a reconnect after a failover lands on the promoted replica.
 * BullMQ duplicates the client for its blocking connections, options and all, so they follow the master too.
 */
function sentinelOptions(s: SentinelTarget, url: string): RedisOptions {
  return {
    sentinels: parseClusterNodes(s.nodes) as { host: string; port: number }[],
    name: s.name,
    ...(s.password ? { sentinelPassword: s.password } : {}),
    // When every sentinel is unreachable, ask again from the first, as the data connection retries: forever, capped.
    sentinelRetryStrategy: (times) => Math.min(times * 200, 5_000),
    // `rediss://`: TLS to the data nodes too (ioredis uses it for the sentinels only unless told).
    ...(url.startsWith('rediss:') ? { enableTLSForSentinelMode: true } : {}),
  };
}

/** True when `client` finds its master through Redis Sentinels. */
function isSentinelClient(client: Redis): boolean {
  return (client.options.sentinels?.length ?? 0) > 0;
}

/** Where a connection reports that Redis went away and came back. */
export interface ConnectionReportOptions {
  /** Gets one warning per outage and one when Redis answers again. @defaultValue one line each on stderr */
  logger?: OutageLogger;
}

/** The part of a pino logger an outage report uses. */
export interface OutageLogger {
  warn(obj: object, msg: string): void;
}

/** Errors of the connection itself (Redis down, unreachable, gone mid-command), as opposed to a command's reply. */
export function isRedisConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; lastNodeError?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EPIPE|EAI_AGAIN|ECONNABORTED)$/.test(e.code)) return true;
  return typeof e.message === 'string' && /^(Connection is closed|connect ETIMEDOUT|Failed to refresh slots cache|None of startup nodes is available|All sentinels are unreachable)/.test(e.message);
}

/**
 * Listen for a connection's errors so an outage is one warning naming the address (and the error's code), and one
 * line when Redis is ready again (one for all of this process's connections to that address), not ioredis' "Unhandled error event" with a stack for every reconnect attempt. The
 * connection keeps reconnecting by itself (and commands wait, on a worker's connection); nothing else changes. A
 * database the server lacks is reported by assertRedisDatabase, naming REDIS_URL, so its SELECT error is not repeated
 * here; any other error (a reply, not the connection) is printed as ioredis does when no one else listens.
 */
function reportRedisOutages(client: Redis | Cluster, address: string, logger?: OutageLogger): void {
  const log: OutageLogger = logger ?? { warn: (_obj, msg) => console.error(`[redis] ${msg}`) };
  client.on('error', (err: Error) => {
    if (/DB index is out of range/i.test(err.message)) return;
    if (!isRedisConnectionError(err)) {
      if (client.listenerCount('error') === 1) console.error('[ioredis] Unhandled error event:', err.stack);
      return;
    }
    const down = downAt(address);
    if (down.clients.has(client)) return;
    down.clients.add(client);
    if (down.clients.size > 1) return; // another connection to this address has said so
    const code = (err as { code?: string }).code;
    log.warn({ address, code }, `redis unreachable at ${address} (${code ?? err.message}): reconnecting, and work waits for it`);
  });
  client.on('ready', () => {
    const down = outages.get(address);
    if (!down?.clients.delete(client) || down.clients.size > 0) return;
    outages.delete(address);
    const downMs = Date.now() - down.since;
    log.warn({ address, downMs }, `redis back at ${address} after ${Math.round(downMs / 100) / 10} s`);
  });
  // A connection closed while Redis was away is no longer waiting for it.
  client.on('end', () => {
    const down = outages.get(address);
    if (down?.clients.delete(client) && down.clients.size === 0) outages.delete(address);
  });
}

/**
 * The connections of this process that are waiting for Redis, by address: a process has several (the queues', the
 * gate's), and one outage is one warning, not one per connection.
 */
const outages = new Map<string, { clients: Set<Redis | Cluster>; since: number }>();

function downAt(address: string): { clients: Set<Redis | Cluster>; since: number } {
  let down = outages.get(address);
  if (!down) outages.set(address, (down = { clients: new Set(), since: Date.now() }));
  return down;
}

/**
 * A client-side deadline for blocking commands (ioredis `blockingTimeout`): a BullMQ worker waiting for jobs
 * (BZPOPMIN with its own timeout, 5 s by default) gets a null answer once that timeout and 100 ms have passed
 * without a reply, and blocks again; a block without a timeout gets this many ms. Without it, a worker whose blocking
 * command was sent to a Redis Cluster master that was then killed waits for a reply that never comes: it took no job
 * after the failover and its close never returned (2 of 3 runs of an idle worker through a master's SIGKILL here,
 * 3 of 4 in an earlier session; with it, 4 of 4 took the next job, within 5.4 s). See cluster-idle-worker.int.test.ts.
 */
export const BLOCKING_TIMEOUT_MS = 30_000;

/** Parse `host:port` seed nodes (IPv6 as `[::1]:7001`). */
export function parseClusterNodes(nodes: readonly string[]): ClusterNode[] {
  return nodes.map((n) => {
    const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(n.trim());
    if (!m) throw new Error(`bad cluster node '${n}' (expected host:port)`);
    return { host: m[1]!, port: Number(m[2]) };
  });
}

/**
 * An ioredis Cluster client. On a failover (a master killed, its replica promoted after `cluster-node-timeout`)
 * commands meet CLUSTERDOWN, MOVED or a closed socket: ioredis refreshes the slot map and retries them, and the
 * offline queue holds new ones meanwhile, so workers carry on by themselves.
 */
export function createClusterConnection(nodes: readonly string[], role: ConnectionRole = 'worker', extra: RedisOptions = {}): Cluster {
  const client = new Cluster(parseClusterNodes(nodes), {
    // Per-command retries are counted across redirections and reconnects: a worker waits a failover out.
    redisOptions: { maxRetriesPerRequest: role === 'worker' ? null : 3, enableReadyCheck: true, blockingTimeout: BLOCKING_TIMEOUT_MS, ...extra },
    maxRedirections: 64,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 200,
    // Re-read the slot map often enough that a promoted replica is found within seconds of the promotion.
    slotsRefreshInterval: 2_000,
    clusterRetryStrategy: (times) => Math.min(times * 200, 5_000),
    enableOfflineQueue: true,
    // No CLUSTER INFO check before 'ready': a connect() whose check finds the cluster down (a master lost with no
    // replica to promote) reconnects without ever settling, and BullMQ awaits that connect() when it reconnects a
    // worker's blocking connection: the worker never asks for a job again, even once the cluster is whole. The client
    // is ready once it has the slot map; a command that meets CLUSTERDOWN is retried (retryDelayOnClusterDown).
    enableReadyCheck: false,
  });
  seedNodes.set(client, nodes.map((n) => n.trim()));
  return client;
}

/** The REDIS_CLUSTER_NODES a Cluster client was made from, for messages (ioredis keeps its copy private). */
const seedNodes = new WeakMap<Cluster, readonly string[]>();

/** True when `client` is an ioredis Cluster (created with cluster nodes). */
export function isCluster(client: Redis | Cluster): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** The clients that answer for the whole keyspace: each master of a cluster, or the one server. */
export function masterNodesOf(client: Redis | Cluster): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}

/**
 * Close a client, tolerating one that is already closed or never connected. A client that is not connected (Redis
 * down, still connecting) is dropped at once: its QUIT would wait in the offline queue behind the commands already
 * waiting there, for a server that may never come.
 */
export async function closeRedisConnection(client: Redis | Cluster): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}

/**
 * Whether Redis takes writes: a short-lived SET under each prefix (one per shard's hash tag, so every master of a
 * cluster that holds a shard is asked). PING is not enough: a Redis full under `maxmemory` with `noeviction`
 * answers PONG but refuses every write with OOM, so a worker that looks ready could not enqueue a single job.
 */
export async function probeRedisWrite(client: Redis, prefixes: readonly string[]): Promise<void> {
  await Promise.all(prefixes.map((p) => client.set(`${p}:ready-probe`, '1', 'PX', READY_PROBE_TTL_MS)));
}

/** How long a readiness probe's key lives: long enough to outlast the command, short enough to leave nothing behind. */
const READY_PROBE_TTL_MS = 10_000;

/** Redis is not what the configuration says it is: a start-up error whose one-line message names the variable. */
export class RedisSetupError extends Error {
  readonly code = 'invalid_config';
}

/** REDIS_URL names a database the server does not have. */
export class RedisDatabaseError extends RedisSetupError {
  constructor(readonly db: number, url: string, databases: number | null) {
    super(
      `REDIS_URL=${showEnvValue('REDIS_URL', url)}: this Redis has no database ${db}` +
        (databases === null ? '' : ` (it has ${databases}: 0 to ${databases - 1}, its 'databases' setting)`) +
        "; name one it has, or raise 'databases' in its redis.conf",
    );
    this.name = 'RedisDatabaseError';
  }
}

/** REDIS_CLUSTER_NODES names a Redis that is not a cluster node: the Cluster client would wait forever for slots. */
export class RedisNotClusterError extends RedisSetupError {
  constructor(nodes: readonly string[], said: string) {
    super(
      `REDIS_CLUSTER_NODES=${nodes.join(',')}: ${nodes.length === 1 ? `${nodes[0]} is not a Redis Cluster node` : 'these are not Redis Cluster nodes'} (${said}); ` +
        'unset REDIS_CLUSTER_NODES to use one Redis through REDIS_URL, or name the nodes of a cluster',
    );
  }
}

/**
 * A Cluster client's first slot map, or a RedisNotClusterError when a seed node answers that it has cluster support
 * disabled (a plain Redis). Any other failure (nodes down, a cluster without full coverage) is waited out, as the
 * workers wait out a failover: the client retries by itself.
 */
function assertClusterMode(client: Cluster): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = () => {
      client.off('ready', onReady);
      client.off('error', onError);
    };
    const onReady = () => {
      done();
      resolve();
    };
    const onError = (err: Error & { lastNodeError?: Error }) => {
      const said = err.lastNodeError?.message ?? err.message;
      if (!/cluster support disabled/i.test(said)) return;
      done();
      reject(new RedisNotClusterError(seedNodes.get(client) ?? [], said));
    };
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/**
 * Make sure `client` uses the database its URL names (`redis://host:6379/3`). ioredis sends that SELECT when it
 * connects without waiting for the answer: when the server has no such database it only emits an error event and
 * carries on in database 0, so a process would silently share database 0 with whatever else lives there. A SELECT
 * awaited here turns that into a RedisDatabaseError before the process takes work. No-op for database 0. On a
 * Cluster (database 0 only) it waits for the slot map, and fails with RedisNotClusterError when the seed nodes are a
 * plain Redis.
 */
export async function assertRedisDatabase(client: Redis | Cluster): Promise<void> {
  if (isCluster(client)) return assertClusterMode(client);
  if (isSentinelClient(client)) await assertSentinelMaster(client);
  const db = Number(client.options.db ?? 0);
  if (!db) return;
  try {
    await client.select(db);
  } catch (err) {
    if (!/DB index is out of range/i.test((err as Error).message)) throw err;
    const databases = await client
      .config('GET', 'databases')
      .then((r) => Number((r as string[])[1]) || null)
      .catch(() => null);
    throw new RedisDatabaseError(db, redisUrlOf(client), databases);
  }
}

/** The URL a client was made from, for messages (host, port and database; ioredis keeps no copy of the string). */
function redisUrlOf(client: Redis): string {
  const o = client.options;
  if (isSentinelClient(client)) return `sentinel master '${o.name}' at ${sentinelAddresses(client)}`;
  return o.path ? `unix://${o.path}` : `redis${o.tls ? 's' : ''}://${o.host ?? '127.0.0.1'}:${o.port ?? 6379}/${o.db ?? 0}`;
}

/** `host:port,...` of a Sentinel client's sentinels, for messages. */
function sentinelAddresses(client: Redis): string {
  return (client.options.sentinels ?? []).map((a) => `${a.host ?? '127.0.0.1'}:${a.port ?? 26379}`).join(',');
}

/** The sentinels do not know REDIS_SENTINEL_NAME, or refuse REDIS_SENTINEL_PASSWORD: the client would retry forever. */
export class RedisSentinelError extends RedisSetupError {
  constructor(message: string) {
    super(message);
    this.name = 'RedisSentinelError';
  }
}

/**
 * Ask each sentinel, once, for the master named REDIS_SENTINEL_NAME. ioredis retries forever when none names it (a
 * typo in the name reads "All sentinels are unreachable", with the sentinels up) or when they refuse its password: a
 * RedisSentinelError says which. Sentinels that do not answer are waited out, as a Redis outage is, by the client.
 */
async function assertSentinelMaster(client: Redis): Promise<void> {
  const o = client.options;
  const name = o.name!;
  const verdicts = await Promise.all(
    (o.sentinels ?? []).map(async (a) => {
      const s = new Redis({
        host: a.host ?? '127.0.0.1',
        port: a.port ?? 26379,
        ...(o.sentinelUsername ? { username: o.sentinelUsername } : {}),
        ...(o.sentinelPassword ? { password: o.sentinelPassword } : {}),
        ...(o.sentinelTLS ? { tls: o.sentinelTLS } : {}),
        lazyConnect: true,
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        connectTimeout: 5_000,
        commandTimeout: 5_000,
      });
      // A refused AUTH reaches the error event; the command then only sees the connection close.
      let said = '';
      s.on('error', (err: Error) => (said = err.message));
      try {
        await s.connect();
        const addr = await s.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name);
        if (Array.isArray(addr)) return { known: true as const };
        const masters = ((await s.call('SENTINEL', 'MASTERS').catch(() => [])) as string[][]).map((m) => m[m.indexOf('name') + 1]).filter(Boolean);
        return { known: false as const, masters };
      } catch (err) {
        const msg = `${(err as Error).message} ${said}`;
        const refusal = /(WRONGPASS|NOAUTH|ERR AUTH)[^\n]*/.exec(msg);
        if (refusal) return { refused: refusal[0].trim() };
        return null; // unreachable: the client waits for it
      } finally {
        s.disconnect();
      }
    }),
  );
  if (verdicts.some((v) => v && 'known' in v && v.known)) return;
  const refused = verdicts.find((v): v is { refused: string } => v !== null && 'refused' in v);
  if (refused) {
    throw new RedisSentinelError(`REDIS_SENTINEL_PASSWORD=${o.sentinelPassword ? '(hidden)' : '(unset)'}: the sentinels at ${sentinelAddresses(client)} refused to answer (${refused.refused}): it must be their requirepass`);
  }
  const unknown = verdicts.filter((v): v is { known: false; masters: string[] } => v !== null && 'known' in v);
  if (unknown.length === 0) return;
  const names = [...new Set(unknown.flatMap((v) => v.masters))];
  throw new RedisSentinelError(
    `REDIS_SENTINEL_NAME=${JSON.stringify(name)}: the sentinels at ${sentinelAddresses(client)} monitor no master of that name` +
      (names.length > 0 ? ` (they monitor ${names.map((n) => `'${n}'`).join(', ')})` : ' (they monitor none)'),
  );
}
