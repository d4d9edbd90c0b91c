import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { closeRedisConnection, createRedisConnection } from './connection.js';
import { deleteRedisPrefix } from './redis-prefix.js';

const redis = createRedisConnection(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer');
const base = `{crawler_test_prefix_${process.pid}_${randomBytes(3).toString('hex')}}`;

afterAll(async () => {
  await deleteRedisPrefix(redis, base);
  await closeRedisConnection(redis);
});

describe('deleteRedisPrefix', () => {
  it('removes every key under the prefix, in batches, and nothing beside it', async () => {
    const prefix = `${base}:a:`;
    const pipe = redis.pipeline();
    for (let i = 0; i < 1234; i++) pipe.set(`${prefix}${i}`, '1');
    pipe.set(`${base}:ab`, 'keep').set(`${base}:b:1`, 'keep');
    await pipe.exec();
    expect(await deleteRedisPrefix(redis, prefix, 100)).toBe(1234);
    expect(await redis.keys(`${prefix}*`)).toEqual([]);
    expect(await redis.mget(`${base}:ab`, `${base}:b:1`)).toEqual(['keep', 'keep']);
  });

  it('takes glob characters in the prefix literally', async () => {
    await redis.set(`${base}:x*[1]?`, '1');
    await redis.set(`${base}:xy[1]z`, 'keep');
    expect(await deleteRedisPrefix(redis, `${base}:x*[1]?`)).toBe(1);
    expect(await redis.get(`${base}:xy[1]z`)).toBe('keep');
  });

  it('refuses an empty prefix', async () => {
    await expect(deleteRedisPrefix(redis, '')).rejects.toThrow(/empty prefix/);
  });
});
