import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './crawler-config.js';

const base = { DATABASE_URL: 'postgresql://u@localhost/db' };
const TIERS = JSON.stringify([{ name: 'residential', cost: 10, urls: ['http://alice:s3cret@127.0.0.1:8000'] }, { name: 'datacenter', cost: 1, urls: ['socks5://bob:hunter2@127.0.0.1:1080'] }]);

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig({ ...base, ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  return '';
}

describe('exit tiers configuration', () => {
  it('is direct alone by default', () => {
    expect(loadConfig(base).exitTiers).toEqual([{ name: 'direct', cost: 0, urls: [] }]);
  });

  it('reads PROXY_TIERS and PROXY_TIERS_FILE, cheapest first, direct unless PROXY_DIRECT=false', () => {
    expect(loadConfig({ ...base, PROXY_TIERS: TIERS }).exitTiers.map((t) => t.name)).toEqual(['direct', 'datacenter', 'residential']);
    const dir = mkdtempSync(join(tmpdir(), 'tiers-'));
    writeFileSync(join(dir, 'tiers.json'), TIERS);
    const c = loadConfig({ ...base, PROXY_TIERS_FILE: join(dir, 'tiers.json'), PROXY_DIRECT: 'false' });
    expect(c.exitTiers.map((t) => t.name)).toEqual(['datacenter', 'residential']);
    expect(c.exitTiers[1]!.urls).toEqual(['http://alice:s3cret@127.0.0.1:8000']);
    expect(c.proxyUnhealthyMs).toBe(60_000);
  });

  it('fails at start-up on bad tiers, naming the variable, never echoing credentials', () => {
    const bad = [
      { PROXY_TIERS: TIERS.replace('"cost":10', '"cost":"ten"') },
      { PROXY_TIERS: TIERS.replace('http://alice', 'ftp://alice') },
      { PROXY_TIERS: TIERS.slice(0, -3) },
      { PROXY_TIERS: TIERS, PROXY_TIERS_FILE: '/nonexistent/tiers.json' },
      { PROXY_TIERS: '[]', PROXY_DIRECT: 'false' },
    ];
    for (const env of bad) {
      const message = errorOf(env);
      expect(message, JSON.stringify(Object.keys(env))).toMatch(/PROXY_TIERS/);
      for (const secret of ['s3cret', 'hunter2', 'alice', 'bob']) expect(message).not.toContain(secret);
    }
    expect(errorOf({ PROXY_TIERS_FILE: '/nonexistent/tiers.json' })).toMatch(/PROXY_TIERS_FILE=.*cannot read the file \(ENOENT\)/);
  });
});
