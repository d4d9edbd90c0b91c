/**
 * The fleet's streaks of refusals on real Redis: what counts as one more refusal in a row. Requests a site refused
 * together (in flight at once when its wall went up) are one refusal, so a site's first burst does not pause it for
 * the length of its fifth refusal in a row; a request sent after a counted refusal counts again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { deleteRedisPrefix } from '@crawler/queue';
import { WallStreaks, type WallRefusal } from './wall-streaks.js';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `{crawler_test_pipeline_wall_streaks_${process.pid}}`;
const streaks = new WallStreaks({ redis, prefix, ttlMs: 60_000 });

afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

const refusal = (atMs: number, sentAtMs: number, top = false): WallRefusal => ({ atMs, sentAtMs, errorType: 'blocked_403', reason: 'blocked_403', fetcher: 'simple_http', top });

describe('a site\'s refusals in a row', () => {
  it('counts the requests refused together once, and a request sent after a counted refusal again', async () => {
    const T = 1_000_000;
    // Four requests left at T..T+30 and were refused at T+100..T+130, as a wall goes up under a burst.
    for (let i = 0; i < 4; i++) await streaks.note('burst.example', refusal(T + 100 + i * 10, T + i * 10));
    expect(await streaks.read('burst.example')).toMatchObject({ refusals: 1 });
    // After the pause: a request sent after the refusal was counted is refused again.
    await streaks.note('burst.example', refusal(T + 700_000, T + 600_000));
    expect(await streaks.read('burst.example')).toMatchObject({ refusals: 2 });
  });

  it('keeps when the top of the ladder was first refused, and a served page ends the streak', async () => {
    const T = 2_000_000;
    await streaks.note('top.example', refusal(T, T - 50, true));
    await streaks.note('top.example', refusal(T + 900_000, T + 800_000, true));
    expect(await streaks.read('top.example')).toMatchObject({ refusals: 2, topSinceMs: T });
    await streaks.clear('top.example');
    expect(await streaks.read('top.example')).toBeNull();
  });
});
