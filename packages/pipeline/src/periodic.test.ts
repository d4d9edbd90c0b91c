import { describe, expect, it } from 'vitest';
import { Periodic } from './periodic.js';

describe('Periodic', () => {
  it('runs one at a time, and nothing after stop() (which waits for the running one)', async () => {
    let runs = 0;
    let release!: () => void;
    const p = new Periodic(async () => {
      runs++;
      await new Promise<void>((r) => (release = r));
      return runs;
    }, 0);
    const a = p.runOnce();
    const b = p.runOnce();
    expect(runs).toBe(1);
    const stopped = p.stop();
    release();
    expect(await a).toBe(1);
    expect(await b).toBe(1);
    await stopped;
    expect(await p.runOnce()).toBeNull();
    p.start({ now: true });
    expect(runs).toBe(1);
  });
});
