import { describe, expect, it } from 'vitest';
import { benchEnv } from './env.js';

describe('benchEnv', () => {
  it('gives the defaults for an empty environment', () => {
    expect(benchEnv({})).toMatchObject({ redisUrl: 'redis://127.0.0.1:6379', chromiumPath: '/usr/bin/chromium', benchKeepDb: false, chaosLinks: 3000, chaosHosts: 30 });
  });

  it('reads flags and numbers, and names a bad variable with the value it got', () => {
    expect(benchEnv({ BENCH_KEEP_DB: '1', CHAOS_LINKS: '500', BENCH_ROLE: 'router' })).toMatchObject({ benchKeepDb: true, chaosLinks: 500, benchRole: 'router' });
    expect(() => benchEnv({ CHAOS_LINKS: 'lots' })).toThrow(/CHAOS_LINKS="lots"/);
    expect(() => benchEnv({ BENCH_ROLE: 'boss' })).toThrow(/BENCH_ROLE/);
  });
});
