import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A hash-tagged prefix no other test run shares. */
export function uniquePrefix(area: string): string {
  return `{crawler_test_fleet_${area}_${randomBytes(4).toString('hex')}}:`;
}

export function createRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
}
