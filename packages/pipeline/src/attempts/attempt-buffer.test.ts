import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { silentLogger } from '@crawler/core';
import { AttemptBuffer } from './attempt-buffer.js';

describe('AttemptBuffer', () => {
  it('writes by size in batches of at most maxBatch', async () => {
    const batches: number[][] = [];
    const buf = new AttemptBuffer<number>({ sink: async (b) => void batches.push(b), maxBatch: 3, flushIntervalMs: 60_000, logger: silentLogger });
    buf.add(1, 2);
    expect(batches).toEqual([]);
    buf.add(3, 4, 5, 6, 7);
    await buf.flush();
    expect(batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(batches.every((b) => b.length <= 3)).toBe(true);
    await buf.close();
  });

  it('writes full batches while rows keep coming, never a trickle of small ones, and the rest by time', async () => {
    const batches: number[][] = [];
    const waiting: (() => void)[] = [];
    const buf = new AttemptBuffer<number>({
      sink: async (b) => {
        batches.push(b);
        await new Promise<void>((r) => waiting.push(r));
      },
      maxBatch: 3,
      flushIntervalMs: 1_000,
      logger: silentLogger,
    });
    // Fake timers: the flush timer fires only when the test says so, however slow the machine.
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const tick = (ms = 5) => vi.advanceTimersByTimeAsync(ms);
    const release = async () => {
      expect(waiting.length).toBeLessThanOrEqual(1); // one write at a time
      waiting.shift()?.();
      await tick();
    };
    buf.add(1, 2, 3); // full: the first write starts and blocks
    buf.add(4); // arrives during the write
    await release();
    // The write did not chase row 4 on its own: it waits for a full batch or the timer.
    expect(batches).toEqual([[1, 2, 3]]);
    buf.add(5, 6, 7, 8); // a full batch again (4..6 written), 7 and 8 left for the timer
    await tick();
    await release();
    expect(batches).toEqual([[1, 2, 3], [4, 5, 6]]);
    await tick();
    expect(batches).toHaveLength(2);
    await tick(1_000); // the timer: a drain of what waits (7, 8)
    buf.add(9); // arrives during the drain: not chased, it waits for the next timer
    await release();
    expect(batches).toEqual([[1, 2, 3], [4, 5, 6], [7, 8]]);
    await tick(1_000);
    await release();
    expect(batches).toEqual([[1, 2, 3], [4, 5, 6], [7, 8], [9]]);
    await buf.close();
  });

  it('writes by time', async () => {
    const rows: number[] = [];
    const buf = new AttemptBuffer<number>({ sink: async (b) => void rows.push(...b), maxBatch: 100, flushIntervalMs: 5, logger: silentLogger });
    buf.add(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(rows).toEqual([1]);
    await buf.close();
  });

  it('keeps rows when a write fails and writes them on close', async () => {
    let fail = true;
    const rows: number[] = [];
    const buf = new AttemptBuffer<number>({
      sink: async (b) => {
        if (fail) throw new Error('db down');
        rows.push(...b);
      },
      maxBatch: 2,
      flushIntervalMs: 60_000,
      logger: silentLogger,
    });
    buf.add(1, 2, 3);
    await buf.flush();
    expect(buf.pendingCount).toBe(3);
    fail = false;
    await buf.close();
    expect(rows.sort()).toEqual([1, 2, 3]);
    expect(buf.pendingCount).toBe(0);
  });
});
