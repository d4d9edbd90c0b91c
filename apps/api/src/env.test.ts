import { describe, expect, it } from 'vitest';
import { parseApiEnv } from './env.js';

const BASE = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x' };

describe('parseApiEnv', () => {
  it('defaults to loopback:3000, batches of 1000, and no Bull Board without a password in development', () => {
    const env = parseApiEnv(BASE);
    expect(env).toMatchObject({ port: 3000, host: '127.0.0.1', production: false, bullBoard: null, apiMaxBatchSize: 1000, apiKeys: null });
    expect(parseApiEnv({ ...BASE, BULL_BOARD_PASSWORD: 'long enough pw' }).bullBoard).toEqual({ user: 'admin', password: 'long enough pw', readOnly: true });
    expect(parseApiEnv({ ...BASE, BULL_BOARD_PASSWORD: 'long enough pw', BULL_BOARD_READ_ONLY: 'false' }).bullBoard?.readOnly).toBe(false);
    expect(() => parseApiEnv({ ...BASE, BULL_BOARD_READ_ONLY: 'maybe' })).toThrow(/BULL_BOARD_READ_ONLY="maybe": expected true or false/);
  });

  it('refuses to start in production without Bull Board credentials, naming both variables', () => {
    const start = () => parseApiEnv({ ...BASE, NODE_ENV: 'production' });
    expect(start).toThrow(/BULL_BOARD_PASSWORD=\(unset\): required when NODE_ENV=production/);
    expect(start).toThrow(/BULL_BOARD_USER=\(unset\)/);
    expect(parseApiEnv({ ...BASE, NODE_ENV: 'production', BULL_BOARD_USER: 'ops', BULL_BOARD_PASSWORD: 'a-real-secret', API_KEYS: 'k'.repeat(24) }).bullBoard).toEqual({ user: 'ops', password: 'a-real-secret', readOnly: true });
  });

  it('refuses to start in production without an API key, and never echoes a short key', () => {
    const prod = { ...BASE, NODE_ENV: 'production', BULL_BOARD_USER: 'ops', BULL_BOARD_PASSWORD: 'a-real-secret' };
    expect(() => parseApiEnv(prod)).toThrow(/API_KEYS=\(unset\): required when NODE_ENV=production/);
    const key = 'k'.repeat(32);
    expect(parseApiEnv({ ...prod, API_KEYS: ` ${key}, ${key.toUpperCase()},${key}` }).apiKeys).toEqual([key, key.toUpperCase()]);
    const short = () => parseApiEnv({ ...BASE, API_KEYS: 'hunter2' });
    expect(short).toThrow(/API_KEYS=\(hidden\): every key must be at least 24 characters/);
    expect(short).not.toThrow(/hunter2/);
  });

  it('names bad variables and never echoes a password', () => {
    const bad = () => parseApiEnv({ ...BASE, PORT: 'eighty', API_MAX_BATCH_SIZE: '0', BULL_BOARD_PASSWORD: 'short', REDIS_URL: 'http://x' });
    expect(bad).toThrow(/PORT="eighty"/);
    expect(bad).toThrow(/API_MAX_BATCH_SIZE="0"/);
    expect(bad).toThrow(/REDIS_URL="http:\/\/x"/);
    expect(bad).toThrow(/BULL_BOARD_PASSWORD=\(hidden\): must be at least 8/);
    expect(bad).not.toThrow(/short/);
  });
});
