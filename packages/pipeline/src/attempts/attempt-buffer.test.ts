import { describe, expect, it } from 'vitest';
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
