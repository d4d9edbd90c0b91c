import { describe, expect, it } from 'vitest';
import { FleetClock } from './fleet-clock.js';

/** A TIME that answers with the true time `trueMs()` plus `skewMs` at the moment it is read, after `tripMs`. */
function timeAfter(tripMs: number, local: () => number, redisAheadMs: number) {
  return {
    time: async (): Promise<[string, string]> => {
      let now = local();
      // The reply is read early in a slow trip (a first TIME held while the connection opened): it is not the midpoint.
      now += 1;
      await new Promise((r) => setTimeout(r, tripMs));
      const ms = now + redisAheadMs;
      return [String(Math.floor(ms / 1000)), String(Math.round((ms % 1000) * 1000))];
    },
  };
}

describe('FleetClock', () => {
  it('takes this machine as right when the skew is within what a slow trip can tell', async () => {
    const clock = new FleetClock({ redis: timeAfter(300, Date.now, 0) as never });
    // Before: the midpoint estimate made this clock 150 ms behind Redis and its neighbours.
    expect(await clock.sync()).toBe(0);
  });

  it('still follows a skew of minutes measured over a slow trip', async () => {
    const clock = new FleetClock({ redis: timeAfter(300, Date.now, 5 * 60_000) as never });
    const offset = await clock.sync();
    expect(Math.abs(offset - 5 * 60_000)).toBeLessThan(400);
  });
});
