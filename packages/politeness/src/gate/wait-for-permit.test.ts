import { describe, expect, it } from 'vitest';
import type { GateDecision, PolitenessGate } from '@crawler/core';
import { waitForPermit, withPermit } from './wait-for-permit.js';

/** A scripted gate: answers the given decisions in order (stubbing what we inject is fine; Redis is tested elsewhere). */
function scriptedGate(answers: Array<Omit<GateDecision, 'permit'> & { granted: boolean; retryInMs?: number; reason?: string }>) {
  const calls: number[] = [];
  let released = 0;
  const gate: PolitenessGate = {
    acquire: async () => {
      calls.push(Date.now());
      const a = answers.shift()!;
      return a.granted ? { granted: true, permit: { release: async () => void released++ } } : (a as GateDecision);
    },
    pauseDomainFor: async () => {},
    domainPausedUntil: async () => null,
  };
  return { gate, calls, released: () => released };
}

describe('waitForPermit', () => {
  it('retries after each hinted delay until granted', async () => {
    const { gate, calls } = scriptedGate([
      { granted: false, reason: 'delay', retryInMs: 30 },
      { granted: false, reason: 'concurrency', retryInMs: 20 },
      { granted: true },
    ]);
    const decision = await waitForPermit(gate, 'a.test');
    expect(decision.granted).toBe(true);
    expect(calls).toHaveLength(3);
  });

  it('hands back a denial that would exceed the wait budget without sleeping through it', async () => {
    const { gate, calls } = scriptedGate([
      { granted: false, reason: 'delay', retryInMs: 10 },
      { granted: false, reason: 'paused', retryInMs: 600_000 },
    ]);
    expect(await waitForPermit(gate, 'a.test', { maxWaitMs: 1000 })).toEqual({ granted: false, reason: 'paused', retryInMs: 600_000 });
    expect(calls).toHaveLength(2);
  });

  it('stops waiting when aborted', async () => {
    const { gate, calls } = scriptedGate([
      { granted: false, reason: 'delay', retryInMs: 900 },
      { granted: false, reason: 'delay', retryInMs: 900 },
      { granted: true },
    ]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const decision = await waitForPermit(gate, 'a.test', { signal: controller.signal, maxWaitMs: 10_000 });
    expect(decision).toMatchObject({ granted: false, reason: 'delay' });
    expect(calls).toHaveLength(2);
  });
});

describe('withPermit', () => {
  it('releases the permit even when the work throws', async () => {
    const { gate, released } = scriptedGate([{ granted: true }]);
    await expect(withPermit(gate, 'a.test', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(released()).toBe(1);
  });

  it('returns the work\'s value, or the denial without running it', async () => {
    const { gate } = scriptedGate([{ granted: true }, { granted: false, reason: 'paused', retryInMs: 60_000 }]);
    expect(await withPermit(gate, 'a.test', async () => 42)).toEqual({ granted: true, value: 42 });
    let ran = false;
    expect(await withPermit(gate, 'a.test', async () => (ran = true), { maxWaitMs: 100 })).toMatchObject({ granted: false, reason: 'paused' });
    expect(ran).toBe(false);
  });
});
