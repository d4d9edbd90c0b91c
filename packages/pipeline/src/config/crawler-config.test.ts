import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa } from '@crawler/testkit';
import { ConfigError, loadConfig, parseFetcherList } from './crawler-config.js';

const base = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x' };

describe('loadConfig', () => {
  it('fills defaults', () => {
    const c = loadConfig(base);
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.queuePrefix).toBe('{crawler}');
    expect(c.learningModeEnabled).toBe(true);
    expect(c.probeTimeoutMs).toBe(3000);
    expect(c.fetchers.map((f) => f.name)).toEqual(['simple_http', 'playwright', 'playwright_stealth']);
    expect(c.defaultFetcher).toBeUndefined();
  });

  it('sizes the router from the fetch concurrency it feeds unless ROUTER_CONCURRENCY says otherwise', () => {
    // The fetchers' slots, and half of plain HTTP's again for the inline fetches writing their outcome.
    expect(loadConfig(base).routerConcurrency).toBe(8 + 2 + 1 + 4);
    expect(loadConfig({ ...base, FETCHERS: 'simple_http:32' }).routerConcurrency).toBe(48);
    expect(loadConfig({ ...base, FETCHERS: 'simple_http:5,playwright:2' }).routerConcurrency).toBe(5 + 2 + 3);
    expect(loadConfig({ ...base, FETCHERS: 'simple_http:32', FETCH_INLINE: 'false' }).routerConcurrency).toBe(32);
    expect(loadConfig({ ...base, FETCHERS: 'playwright:4' }).routerConcurrency).toBe(4);
    expect(loadConfig({ ...base, FETCHERS: 'simple_http:32', ROUTER_CONCURRENCY: '4' }).routerConcurrency).toBe(4);
    expect(() => loadConfig({ ...base, ROUTER_CONCURRENCY: '0' })).toThrow(/ROUTER_CONCURRENCY="0"/);
  });

  it('opens as many browser pages as the process runs browser fetches', () => {
    // Fewer pages than fetches, and a fetch waited for a page with its deadline running (the pool's default was 4).
    expect(loadConfig({ ...base, FETCHERS: 'playwright:4,playwright_stealth:2' }).browserPages).toBe(6);
    expect(loadConfig({ ...base, FETCHERS: 'simple_http:16,playwright:8' }).browserPages).toBe(8);
    // Split over the shards rounded up, as the fetch workers split it.
    expect(loadConfig({ ...base, FETCHERS: 'playwright:4,playwright_stealth:1', QUEUE_SHARDS: '3' }).browserPages).toBe(6 + 3);
    expect(loadConfig({ ...base, FETCHERS: 'simple_http:16' }).browserPages).toBeUndefined();
  });

  it('keeps 4 Postgres connections unless DATABASE_POOL_SIZE says otherwise', () => {
    expect(loadConfig(base).databasePoolSize).toBe(4);
    expect(loadConfig({ ...base, DATABASE_POOL_SIZE: '10' }).databasePoolSize).toBe(10);
    expect(() => loadConfig({ ...base, DATABASE_POOL_SIZE: '0' })).toThrow(/DATABASE_POOL_SIZE="0"/);
  });

  it('fetches inline by default, on a Redis Cluster too, unless FETCH_INLINE says otherwise', () => {
    const cluster = { ...base, REDIS_CLUSTER_NODES: '127.0.0.1:7001,127.0.0.1:7002' };
    expect(loadConfig(base).fetchInline).toBe(true);
    expect(loadConfig({ ...base, FETCH_INLINE: 'off' }).fetchInline).toBe(false);
    expect(loadConfig(cluster).fetchInline).toBe(true);
    expect(loadConfig({ ...cluster, FETCH_INLINE: 'false' }).fetchInline).toBe(false);
    expect(() => loadConfig({ ...base, FETCH_INLINE: 'sometimes' })).toThrow(/FETCH_INLINE/);
  });

  it('analyses responses on one thread when the machine has a second core, unless ANALYSIS_THREADS says otherwise', () => {
    expect(loadConfig(base).analysisThreads).toBe(availableParallelism() >= 2 ? 1 : 0);
    expect(loadConfig({ ...base, ANALYSIS_THREADS: '0' }).analysisThreads).toBe(0);
    expect(loadConfig({ ...base, ANALYSIS_THREADS: '3' }).analysisThreads).toBe(3);
    expect(() => loadConfig({ ...base, ANALYSIS_THREADS: '-1' })).toThrow(/ANALYSIS_THREADS/);
  });

  it('parses fetchers with concurrency and aliases', () => {
    const c = loadConfig({ ...base, FETCHERS: 'direct_access:16, playwright', DEFAULT_FETCHER: 'direct_access', LEARNING_MODE_ENABLED: 'false' });
    expect(c.fetchers).toEqual([{ name: 'simple_http', concurrency: 16 }, { name: 'playwright', concurrency: 2 }]);
    expect(c.defaultFetcher).toBe('simple_http');
    expect(c.learningModeEnabled).toBe(false);
  });

  it('fails naming every bad variable and its value', () => {
    let err: unknown;
    try {
      loadConfig({ ...base, LEARNING_MODE_ENABLED: 'maybe', PROBE_TIMEOUT_MS: '-3', FETCHERS: 'simple_http:x' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('LEARNING_MODE_ENABLED="maybe"');
    expect(msg).toContain('PROBE_TIMEOUT_MS="-3"');
    expect(msg).toContain('FETCHERS="simple_http:x"');
  });

  it('defaults the router\'s learned-query heuristics to core\'s routing policy, with "all" and lists accepted', () => {
    expect(loadConfig(base).routingHeuristicTypes).toEqual(['domain', 'section', 'suffix', 'contains_cdn', 'video_platform']);
    expect(loadConfig(base).domainMemoryEnabled).toBe(true);
    expect(loadConfig({ ...base, ROUTING_HEURISTIC_TYPES: 'all' }).routingHeuristicTypes).toContain('path_depth');
    const c = loadConfig({ ...base, ROUTING_HEURISTIC_TYPES: ' Domain, suffix,domain ', DOMAIN_MEMORY_ENABLED: 'false' });
    expect(c.routingHeuristicTypes).toEqual(['domain', 'suffix']);
    expect(c.domainMemoryEnabled).toBe(false);
    expect(() => loadConfig({ ...base, ROUTING_HEURISTIC_TYPES: 'domain,path depth' })).toThrow(/ROUTING_HEURISTIC_TYPES="domain,path depth".*path depth/);
    expect(() => loadConfig({ ...base, ROUTING_HEURISTIC_TYPES: ',' })).toThrow(/ROUTING_HEURISTIC_TYPES/);
  });

  it('reads per-domain politeness limits for every process that builds a runtime (workers, crawl run, crawl crawl)', () => {
    expect(loadConfig(base).domainLimits).toEqual({});
    expect(loadConfig({ ...base, DOMAIN_LIMITS: 'Shop.example=1:2000, www.news.example=4,' }).domainLimits).toEqual({
      'shop.example': { maxConcurrency: 1, minDelayMs: 2000 },
      'news.example': { maxConcurrency: 4 },
    });
    expect(() => loadConfig({ ...base, DOMAIN_LIMITS: 'shop.example=0' })).toThrow(/DOMAIN_LIMITS="shop.example=0".*bad entry 'shop.example=0'/);
    expect(() => loadConfig({ ...base, DOMAIN_LIMITS: 'shop.example' })).toThrow(/DOMAIN_LIMITS/);
  });

  it('reads FETCH_ALLOW_HOSTS as a de-duplicated, lower-case list', () => {
    expect(loadConfig(base).fetchAllowHosts).toEqual([]);
    expect(loadConfig({ ...base, FETCH_ALLOW_HOSTS: ' Intranet.example, 10.1.2.0/24,,intranet.example ' }).fetchAllowHosts).toEqual(['intranet.example', '10.1.2.0/24']);
    expect(loadConfig({ ...base, FETCH_ALLOW_HOSTS: '127.0.0.1,::1,fd00::/8,my_host.internal,localhost' }).fetchAllowHosts).toEqual(['127.0.0.1', '::1', 'fd00::/8', 'my_host.internal', 'localhost']);
  });

  it('stops at a background-loop interval Node would run after 1 ms (past 2^31 - 1 ms)', () => {
    for (const name of ['RECONCILE_INTERVAL_MS', 'SCHEDULER_INTERVAL_MS', 'TABLE_STATS_INTERVAL_MS']) {
      expect(() => loadConfig({ ...base, [name]: '3000000000' }), name).toThrow(new RegExp(`${name}="3000000000": expected an integer from 0 to 2147483647`));
      expect(() => loadConfig({ ...base, [name]: '2147483647' }), name).not.toThrow();
    }
  });

  it('stops at a timeout or delay a timer would run after 1 ms, and at a pause or memory no date can hold', () => {
    // FETCH_TIMEOUT_MS=3000000000 ("be patient") made every fetch's deadline fire at once: every link timed out.
    for (const name of ['FETCH_TIMEOUT_MS', 'PROBE_TIMEOUT_MS', 'CHALLENGE_WAIT_MS', 'LOCK_DURATION_MS', 'STALLED_INTERVAL_MS', 'DOMAIN_MIN_DELAY_MS', 'INFRA_RETRY_MAX_MS', 'PROXY_UNHEALTHY_MS', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_RETRY_BASE_MS', 'WEBHOOK_RETRY_MAX_MS']) {
      expect(() => loadConfig({ ...base, [name]: '3000000000' }), name).toThrow(new RegExp(`${name}="3000000000": expected an integer from \\d+ to 2147483647`));
    }
    for (const name of ['PAUSE_MAX_MS', 'PAUSE_BLOCK_BASE_MS', 'RATE_LIMIT_MIN_PAUSE_MS', 'UNREACHABLE_PAUSE_BASE_MS', 'PLAIN_HTTP_MEMORY_MS', 'PROBE_WALL_MEMORY_MS', 'ROUTER_DECISION_CACHE_MS', 'ROBOTS_UNREACHABLE_TTL_MS', 'PROBE_TTL_MS', 'WEBHOOK_RETRY_WINDOW_MS']) {
      expect(() => loadConfig({ ...base, [name]: '1e20' }), name).toThrow(new RegExp(name));
      expect(() => loadConfig({ ...base, [name]: String(36_500 * 86_400_000 + 1) }), name).toThrow(new RegExp(`${name}=.*expected an integer from \\d+ to 3153600000000`));
      expect(() => loadConfig({ ...base, [name]: String(30 * 86_400_000) }), name).not.toThrow();
    }
  });

  it('stops at a size or count past the integers JavaScript holds exactly, instead of taking it as no limit', () => {
    // FETCH_MAX_BYTES=1e99 parsed as an "integer", and no response ever reached it.
    for (const name of ['FETCH_MAX_BYTES', 'MAX_ATTEMPTS', 'ANALYSIS_THREADS']) {
      for (const value of ['1e99', '9007199254740993', '99999999999999999999']) {
        expect(() => loadConfig({ ...base, [name]: value }), `${name}=${value}`).toThrow(new RegExp(`${name}="${value}": expected an integer from \\d+ to 9007199254740991`));
      }
    }
    // A safe integer, in whichever notation, is still a setting.
    expect(loadConfig({ ...base, FETCH_MAX_BYTES: '5e6' }).fetchMaxBytes).toBe(5_000_000);
    expect(loadConfig({ ...base, FETCH_MAX_BYTES: '9007199254740991' }).fetchMaxBytes).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('reads NODE_EXTRA_CA_CERTS as the certificates it holds, and stops at a file Node would only warn about', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ca-'));
    const ca = createTestCa();
    const other = createTestCa('another CA');
    writeFileSync(join(dir, 'two.pem'), `# corporate roots\n${ca.cert}\n${other.cert}`);
    writeFileSync(join(dir, 'none.pem'), 'not a certificate\n');
    writeFileSync(join(dir, 'broken.pem'), ca.cert.split('\n').filter((_, i) => i !== 3).join('\n'));
    try {
      expect(loadConfig(base).nodeExtraCaCerts).toEqual([]);
      expect(loadConfig({ ...base, NODE_EXTRA_CA_CERTS: join(dir, 'two.pem') }).nodeExtraCaCerts).toEqual([ca.cert.trim(), other.cert.trim()]);
      expect(() => loadConfig({ ...base, NODE_EXTRA_CA_CERTS: join(dir, 'missing.pem') })).toThrow(/NODE_EXTRA_CA_CERTS.*cannot read the file \(ENOENT\)/s);
      expect(() => loadConfig({ ...base, NODE_EXTRA_CA_CERTS: join(dir, 'none.pem') })).toThrow(/NODE_EXTRA_CA_CERTS.*no PEM certificate/s);
      expect(() => loadConfig({ ...base, NODE_EXTRA_CA_CERTS: join(dir, 'broken.pem') })).toThrow(/NODE_EXTRA_CA_CERTS.*certificate 1 .*cannot be parsed/s);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops at an FETCH_ALLOW_HOSTS entry the SSRF guard would take for a host name that never matches', () => {
    for (const bad of ['127.0.0.0/33', '999.1.1.1/8', '10.0.0.0/8/8', 'fd00::/129', 'http://intranet.example', 'intranet.example:8080', '10.0.0.0/']) {
      expect(() => loadConfig({ ...base, FETCH_ALLOW_HOSTS: `localhost,${bad}` }), bad).toThrow(new RegExp(`FETCH_ALLOW_HOSTS=.*bad entry '${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}'`));
    }
  });

  it('defaults to one Redis and one shard, and reads cluster nodes and shards for every process', () => {
    const d = loadConfig(base);
    expect(d.redisTarget).toEqual({ url: 'redis://127.0.0.1:6379', clusterNodes: [] });
    expect(d.queueShards).toBe(1);
    expect(d.queueShardsConsumed).toEqual([0]);
    const c = loadConfig({ ...base, REDIS_CLUSTER_NODES: '127.0.0.1:7001, 127.0.0.1:7002,', QUEUE_SHARDS: '4', QUEUE_SHARDS_CONSUMED: '3,1,3' });
    expect(c.redisTarget.clusterNodes).toEqual(['127.0.0.1:7001', '127.0.0.1:7002']);
    expect(c.queueShards).toBe(4);
    expect(c.queueShardsConsumed).toEqual([1, 3]);
    expect(loadConfig({ ...base, QUEUE_SHARDS: '3' }).queueShardsConsumed).toEqual([0, 1, 2]);
    expect(() => loadConfig({ ...base, QUEUE_SHARDS: '2', QUEUE_SHARDS_CONSUMED: '0,2' })).toThrow(/QUEUE_SHARDS_CONSUMED.*shard 2 does not exist/);
    expect(() => loadConfig({ ...base, QUEUE_SHARDS: '0' })).toThrow(/QUEUE_SHARDS="0"/);
    expect(() => loadConfig({ ...base, REDIS_CLUSTER_NODES: 'redis://a:1' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ ...base, QUEUE_SHARDS_CONSUMED: 'x' })).toThrow(/QUEUE_SHARDS_CONSUMED/);
  });

  it('reads Redis Sentinel (sentinels, master name, sentinel password) and refuses half or clashing settings in one line', () => {
    const s = loadConfig({ ...base, REDIS_URL: 'redis://:pw@ignored:1/2', REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26379', REDIS_SENTINEL_NAME: 'mymaster', REDIS_SENTINEL_PASSWORD: 'spw' });
    expect(s.redisTarget).toEqual({ url: 'redis://:pw@ignored:1/2', clusterNodes: [], sentinel: { nodes: ['10.0.0.1:26379', '10.0.0.2:26379'], name: 'mymaster', password: 'spw' } });
    expect(loadConfig({ ...base, REDIS_SENTINELS: '[::1]:26379', REDIS_SENTINEL_NAME: 'm' }).redisTarget.sentinel).toEqual({ nodes: ['[::1]:26379'], name: 'm' });
    const oneLine = (env: Record<string, string>, re: RegExp) => {
      let err: unknown;
      try {
        loadConfig({ ...base, ...env });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).not.toContain('\n');
      expect((err as Error).message).toMatch(re);
    };
    oneLine({ REDIS_SENTINELS: '10.0.0.1:26379' }, /REDIS_SENTINEL_NAME=\(unset\): required when REDIS_SENTINELS is set/);
    oneLine({ REDIS_SENTINEL_NAME: 'mymaster' }, /REDIS_SENTINELS=\(unset\): required when REDIS_SENTINEL_NAME is set/);
    oneLine({ REDIS_SENTINELS: 'redis://10.0.0.1:26379', REDIS_SENTINEL_NAME: 'm' }, /REDIS_SENTINELS=.*expected host:port/);
    oneLine({ REDIS_SENTINELS: '10.0.0.1:26379', REDIS_SENTINEL_NAME: 'm', REDIS_CLUSTER_NODES: '10.0.0.1:7001' }, /REDIS_SENTINELS=.*not both/);
    oneLine({ REDIS_URL: 'unix:///tmp/redis.sock', REDIS_SENTINELS: '10.0.0.1:26379', REDIS_SENTINEL_NAME: 'm' }, /REDIS_URL=.*unix/);
    // docker-compose passes every one blank when unset.
    expect(loadConfig({ ...base, REDIS_SENTINELS: '', REDIS_SENTINEL_NAME: '', REDIS_SENTINEL_PASSWORD: '' }).redisTarget).toEqual({ url: 'redis://127.0.0.1:6379', clusterNodes: [] });
    oneLine({ REDIS_SENTINEL_PASSWORD: 'spw' }, /REDIS_SENTINEL_PASSWORD=\(hidden\): only used with REDIS_SENTINELS/);
  });

  it('refuses a queue prefix without a hash tag on a Redis Cluster, and reads a blank prefix as the default', () => {
    // Each key of a queue would hash to its own slot: BullMQ's multi-key scripts fail with CROSSSLOT on the first job.
    expect(() => loadConfig({ ...base, REDIS_CLUSTER_NODES: '127.0.0.1:7001', QUEUE_PREFIX: 'crawler' })).toThrow(/QUEUE_PREFIX="crawler".*hash tag.*'\{crawler\}'/s);
    expect(loadConfig({ ...base, REDIS_CLUSTER_NODES: '127.0.0.1:7001', QUEUE_PREFIX: 'fleet-{a}' }).queuePrefix).toBe('fleet-{a}');
    expect(loadConfig({ ...base, QUEUE_PREFIX: 'crawler' }).queuePrefix).toBe('crawler');
    // docker-compose passes `QUEUE_PREFIX: ${QUEUE_PREFIX:-}`: blank is the hash-tagged default.
    expect(loadConfig({ ...base, QUEUE_PREFIX: '' }).queuePrefix).toBe('{crawler}');
    expect(() => loadConfig({ ...base, QUEUE_PREFIX: 'a:b' })).toThrow(/QUEUE_PREFIX/);
  });

  it('requires a postgres DATABASE_URL', () => {
    expect(() => loadConfig({})).toThrow(/DATABASE_URL=\(unset\)/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL="mysql:\/\/x"/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://crawler:hunter22@db/x' })).toThrow(/DATABASE_URL="mysql:\/\/crawler:\*\*\*@db\/x"/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://crawler:hunter22@db/x' })).not.toThrow(/hunter22/);
  });

  it('refuses an unknown fetcher name, naming the variable, the entry and the known names', () => {
    expect(() => loadConfig({ ...base, FETCHERS: 'simple_htp:4' })).toThrow(/FETCHERS="simple_htp:4": unknown fetcher 'simple_htp'.*known: simple_http, playwright, playwright_stealth/);
    expect(loadConfig({ ...base, FETCHERS: 'direct_access:2,Playwright' }).fetchers.map((f) => f.name)).toEqual(['simple_http', 'playwright']);
  });

  it('bounds each fetcher\'s concurrency, so a typo does not start a worker with absurd concurrency', () => {
    expect(loadConfig({ ...base, FETCHERS: 'simple_http:1000,playwright:64,playwright_stealth:64' }).fetchers.map((f) => f.concurrency)).toEqual([1000, 64, 64]);
    const one = (env: Record<string, string>) => {
      try {
        loadConfig({ ...base, ...env });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    const http = one({ FETCHERS: 'simple_http:100000' });
    expect(http).toBe('invalid configuration: FETCHERS="simple_http:100000": concurrency 100000 of simple_http is more than 1000 (expected name or name:concurrency, concurrency from 1 to 1000)');
    expect(one({ FETCHERS: 'simple_http:8,playwright:200' })).toMatch(/^invalid configuration: FETCHERS="simple_http:8,playwright:200": concurrency 200 of playwright is more than 64 /);
    expect(one({ FETCHERS: 'playwright_stealth:99999999999999999999' })).toMatch(/FETCHERS="playwright_stealth:99999999999999999999": concurrency 99999999999999999999 of playwright_stealth is more than 64/);
    expect(http).not.toContain('\n');
  });

  it('bounds per-domain politeness: DOMAIN_LIMITS concurrency and delay, DOMAIN_MAX_CONCURRENCY, ROUTER_CONCURRENCY', () => {
    expect(loadConfig({ ...base, DOMAIN_LIMITS: 'a.example=1000:2147483647', DOMAIN_MAX_CONCURRENCY: '1000', ROUTER_CONCURRENCY: '10000' }).domainLimits).toEqual({
      'a.example': { maxConcurrency: 1000, minDelayMs: 2_147_483_647 },
    });
    expect(() => loadConfig({ ...base, DOMAIN_LIMITS: 'a.example=2,shop.example=20000' })).toThrow(
      /^invalid configuration: DOMAIN_LIMITS="a.example=2,shop.example=20000": bad entry 'shop.example=20000' \(expected domain=concurrency or domain=concurrency:minDelayMs, concurrency from 1 to 1000, minDelayMs at most 2147483647\)$/,
    );
    expect(() => loadConfig({ ...base, DOMAIN_LIMITS: 'shop.example=2:99999999999999' })).toThrow(/DOMAIN_LIMITS="shop.example=2:99999999999999": bad entry/);
    expect(() => loadConfig({ ...base, DOMAIN_MAX_CONCURRENCY: '20000' })).toThrow(/^invalid configuration: DOMAIN_MAX_CONCURRENCY="20000": expected an integer from 1 to 1000$/);
    for (const value of ['1000000', '1e99', '99999999999999999999']) {
      expect(() => loadConfig({ ...base, ROUTER_CONCURRENCY: value })).toThrow(new RegExp(`^invalid configuration: ROUTER_CONCURRENCY="${value}": expected an integer from 1 to 10000$`));
    }
  });

  it('rejects an empty fetcher list', () => {
    expect(() => parseFetcherList(' , ')).toThrow(/no fetcher/);
  });
});

describe('events configuration', () => {
  const DB = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x' };

  it('has no webhook by default and streams to <QUEUE_PREFIX>:events', () => {
    const c = loadConfig({ ...DB, QUEUE_PREFIX: '{fleet}' }).events;
    expect(c.webhook).toBeNull();
    expect(c.stream).toEqual({ key: '{fleet}:events', maxLen: 100_000 });
    expect(c.retry.retryWindowMs).toBe(86_400_000);
    expect(c.dispatcherEnabled).toBe(true);
    expect(loadConfig({ ...DB, EVENTS_STREAM: 'off', EVENTS_DISPATCHER: 'false' }).events).toMatchObject({ stream: null, dispatcherEnabled: false });
  });

  it('needs a long enough secret with a webhook URL, and never prints it', () => {
    const c = loadConfig({ ...DB, WEBHOOK_URL: 'https://hooks.example/in', WEBHOOK_SECRET: 'a-long-enough-secret' }).events;
    expect(c.webhook).toEqual({ url: 'https://hooks.example/in', secret: 'a-long-enough-secret', timeoutMs: 10_000 });
    expect(() => loadConfig({ ...DB, WEBHOOK_URL: 'https://hooks.example/in' })).toThrow(/WEBHOOK_SECRET=\(unset\): required when WEBHOOK_URL is set/);
    let message = '';
    try {
      loadConfig({ ...DB, WEBHOOK_URL: 'https://hooks.example/in', WEBHOOK_SECRET: 'short-pw' });
    } catch (err) {
      message = String(err);
    }
    expect(message).toMatch(/WEBHOOK_SECRET=\(hidden\): must be at least 16 characters/);
    expect(message).not.toContain('short-pw');
    expect(() => loadConfig({ ...DB, WEBHOOK_URL: 'ftp://x', WEBHOOK_SECRET: 'a-long-enough-secret' })).toThrow(/WEBHOOK_URL="ftp:\/\/x"/);
    expect(() => loadConfig({ ...DB, WEBHOOK_RETRY_WINDOW_MS: 'a day' })).toThrow(/WEBHOOK_RETRY_WINDOW_MS/);
  });
});
