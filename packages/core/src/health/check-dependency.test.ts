import { describe, expect, it } from 'vitest';
import { dependencyCheck } from './check-dependency.js';

function recordingLogger() {
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => lines.push({ level, obj, msg });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('dependencyCheck', () => {
  it('answers ok or fail, without the driver words, and times out a probe that never answers', async () => {
    const { lines, logger } = recordingLogger();
    let fail = false;
    const redis = dependencyCheck('redis', async () => {
      if (fail) throw new Error('connect ECONNREFUSED 10.0.0.5:6379');
    }, { timeoutMs: 20, logger });
    expect(await redis()).toBe('ok');
    fail = true;
    expect(await redis()).toBe('fail');
    const hung = dependencyCheck('postgres', () => new Promise(() => {}), { timeoutMs: 20, logger });
    expect(await hung()).toBe('fail');
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.obj.dependency)).toEqual(['redis', 'postgres']);
  });

  it('warns once when a dependency starts failing and once when it answers again, not at every probe of the outage', async () => {
    const { lines, logger } = recordingLogger();
    let up = false;
    const check = dependencyCheck('postgres', async () => {
      if (!up) throw new Error('connect ECONNREFUSED');
    }, { timeoutMs: 1_000, logger });
    // A kubelet probing every 5 s through a 10-minute outage: 120 probes.
    for (let i = 0; i < 120; i++) expect(await check()).toBe('fail');
    up = true;
    expect(await check()).toBe('ok');
    expect(await check()).toBe('ok');
    const loud = lines.filter((l) => l.level !== 'debug');
    expect(loud.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'health check failed: postgres does not answer (logged again when it does)'],
      ['info', 'health check: postgres answers again after 120 failed checks'],
    ]);
    expect(loud[0]!.obj.err).toBeInstanceOf(Error);
    expect(lines.filter((l) => l.level === 'debug')).toHaveLength(119);
  });
});
