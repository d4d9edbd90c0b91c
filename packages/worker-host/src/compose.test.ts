/**
 * docker-compose.yml as a user runs it: `docker-compose config` (Debian's docker-compose, installed by .ci/setup;
 * it validates the file without a Docker engine) resolves it, and every process it starts must accept the
 * environment it is given. A value the processes refuse (a blank that is not read as the default, a prefix a Redis
 * Cluster cannot use) would only show when a user's container exits at start.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseWorkerEnv } from './env.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REQUIRED = { POSTGRES_PASSWORD: 'a-test-password', BULL_BOARD_USER: 'admin', BULL_BOARD_PASSWORD: 'a-board-password', API_KEYS: 'k'.repeat(24) };

interface Resolved {
  services: Record<string, { command?: string[]; environment?: Record<string, string | null>; healthcheck?: { test?: string[] } }>;
}

/** `docker-compose config` with only these variables (no .env, nothing from the test's own environment). */
function composeConfig(vars: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('docker-compose', ['--project-directory', ROOT, '-f', join(ROOT, 'docker-compose.yml'), 'config'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...vars },
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function parseYaml(text: string): Resolved {
  // python3-yaml comes with docker-compose.
  const r = spawnSync('python3', ['-c', 'import sys, yaml, json; print(json.dumps(yaml.safe_load(sys.stdin)))'], { input: text, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Resolved;
}

/** The services that run our processes, with the environment each is given. */
function appServices(vars: Record<string, string>): Array<[string, Record<string, string>]> {
  const out = composeConfig(vars);
  expect(out.status, out.stderr).toBe(0);
  return Object.entries(parseYaml(out.stdout).services)
    .filter(([, s]) => s.command?.[0] === 'node')
    .map(([name, s]) => [name, Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, v ?? '']))]);
}

describe('docker-compose.yml', () => {
  it('resolves with the four required variables, and every process accepts the environment it gets', () => {
    const services = appServices(REQUIRED);
    expect(services.map(([name]) => name).sort()).toEqual(['api', 'browser-fetcher', 'fetcher', 'migrate', 'router']);
    for (const [name, env] of services) {
      const parsed = parseWorkerEnv(env);
      expect(parsed.crawler.queuePrefix, name).toBe('{crawler}');
      expect(parsed.crawler.databaseUrl, name).toMatch(/^postgresql:\/\/crawler:.*@postgres:5432\/crawler$/);
    }
    const fetchers = Object.fromEntries(services.map(([name, env]) => [name, parseWorkerEnv(env).crawler.fetchers.map((f) => f.name)]));
    expect(fetchers.fetcher).toEqual(['simple_http']);
    expect(fetchers['browser-fetcher']).toEqual(['playwright', 'playwright_stealth']);
  });

  it('checks each long-running worker on the /healthz it serves, the API on its /readyz, and not the one-shot migrate', () => {
    const out = composeConfig(REQUIRED);
    const services = parseYaml(out.stdout).services;
    for (const name of ['router', 'fetcher', 'browser-fetcher']) expect(services[name]!.healthcheck?.test?.join(' '), name).toMatch(/\/healthz/);
    expect(services.migrate!.healthcheck?.test).toEqual(['NONE']);
    // The API is healthy when a posted link can be queued: readiness, which a Redis full under maxmemory fails.
    expect(services.api!.healthcheck?.test?.join(' ')).toMatch(/:3000\/readyz/);
  });

  it('takes a Redis Cluster with shards as its comments say: the default prefix carries the hash tag a cluster needs', () => {
    for (const [name, env] of appServices({ ...REQUIRED, REDIS_CLUSTER_NODES: '10.0.0.1:7001,10.0.0.2:7001', QUEUE_SHARDS: '3' })) {
      const parsed = parseWorkerEnv(env);
      expect(parsed.crawler.redisTarget.clusterNodes, name).toEqual(['10.0.0.1:7001', '10.0.0.2:7001']);
      expect(parsed.crawler.queueShards, name).toBe(3);
    }
  });

  it('stops and names a missing secret instead of starting with a default password', () => {
    for (const missing of Object.keys(REQUIRED)) {
      const vars: Record<string, string> = { ...REQUIRED };
      delete vars[missing];
      const out = composeConfig(vars);
      expect(out.status, missing).not.toBe(0);
      expect(out.stderr).toContain(`set ${missing}`);
    }
  });
});
