import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

import { REDIS_URL } from '@crawler/testkit';

export { REDIS_URL };

/** A hash-tagged prefix no other test run shares. */
export function uniquePrefix(area: string): string {
  return `{crawler_test_fleet_${area}_${randomBytes(4).toString('hex')}}:`;
}

export function createRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
}
