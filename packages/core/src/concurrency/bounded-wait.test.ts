import { describe, expect, it } from 'vitest';
import { sharedWhilePending, withTimeout } from './bounded-wait.js';

describe('withTimeout', () => {
  it('gives the promise\'s value, or rejects when it does not settle in time', async () => {
    await expect(withTimeout(Promise.resolve(7), 1_000)).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('refused')), 1_000)).rejects.toThrow('refused');
    await expect(withTimeout(new Promise(() => undefined), 5)).rejects.toThrow('no answer within 5 ms');
    await expect(withTimeout(new Promise(() => undefined), 5, () => null)).resolves.toBeNull();
    await expect(withTimeout(Promise.reject(new Error('refused')), 1_000, () => null)).rejects.toThrow('refused');
  });
});

describe('sharedWhilePending', () => {
  it('shares a pending call, and calls again once it has settled', async () => {
    let calls = 0;
    let answer!: (n: number) => void;
    const read = sharedWhilePending(() => {
      calls += 1;
      return new Promise<number>((resolve) => (answer = resolve));
    });
    const first = read();
    const second = read();
    expect(calls).toBe(1);
    answer(1);
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    const third = read();
    expect(calls).toBe(2);
    answer(2);
    expect(await third).toBe(2);
  });
});
