import { describe, expect, it } from 'vitest';
import { OutcomeBatcher, type BatchOutcomeWriter } from './outcome-batcher.js';
import type { AppliedOutcome, OutcomeWrite } from './outcome-store.js';

const applied = (w: OutcomeWrite): AppliedOutcome => ({ linkUpdated: true, status: `done:${w.linkId}`, contentId: null, visit: null, attemptIds: [] });
const write = (linkId: string): OutcomeWrite => ({ linkId, attempts: [], link: { status: 'done' } });

/** A store that records its calls and answers after `release()`, so a test decides when a batch has committed. */
function fakeStore(fail: (w: OutcomeWrite) => boolean = () => false) {
  const calls: string[][] = [];
  const gates: (() => void)[] = [];
  const settle = (w: OutcomeWrite): PromiseSettledResult<AppliedOutcome> => (fail(w) ? { status: 'rejected', reason: new Error(`bad ${w.linkId}`) } : { status: 'fulfilled', value: applied(w) });
  const store: BatchOutcomeWriter = {
    async apply(w) {
      calls.push([w.linkId]);
      await new Promise<void>((r) => gates.push(r));
      const s = settle(w);
      if (s.status === 'rejected') throw s.reason;
      return s.value;
    },
    async applyMany(ws) {
      calls.push(ws.map((w) => w.linkId));
      await new Promise<void>((r) => gates.push(r));
      return ws.map(settle);
    },
  };
  const release = async () => {
    for (const g of gates.splice(0)) g();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { store, calls, release };
}

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe('OutcomeBatcher', () => {
  it('a full batch goes at once; nothing resolves before its batch committed', async () => {
    const { store, calls, release } = fakeStore();
    const b = new OutcomeBatcher(store, { maxBatch: 3, maxWaitMs: 10_000 });
    let resolved = 0;
    const ps = ['a', 'b', 'c'].map((id) => b.apply(write(id)).then((r) => (resolved++, r)));
    expect(calls).toEqual([['a', 'b', 'c']]);
    await tick();
    expect(resolved).toBe(0);
    await release();
    expect((await Promise.all(ps)).map((r) => r.status)).toEqual(['done:a', 'done:b', 'done:c']);
  });

  it('a lone write goes after the wait; what arrives while a batch is written goes as soon as it committed', async () => {
    const { store, calls, release } = fakeStore();
    const b = new OutcomeBatcher(store, { maxBatch: 32, maxWaitMs: 1, maxInFlight: 1 });
    const first = b.apply(write('a'));
    await tick(20);
    expect(calls).toEqual([['a']]);
    const later = [b.apply(write('b')), b.apply(write('c'))];
    await tick(20);
    expect(calls).toHaveLength(1); // waiting for the batch in flight, not for the timer
    await release();
    expect(calls).toEqual([['a'], ['b', 'c']]);
    await release();
    await Promise.all([first, ...later]);
  });

  it('two writes of one link never share a batch', async () => {
    const { store, calls, release } = fakeStore();
    const b = new OutcomeBatcher(store, { maxBatch: 32, maxWaitMs: 10_000, maxInFlight: 4 });
    const ps = [b.apply(write('a')), b.apply(write('b')), b.apply(write('a'))];
    expect(calls).toEqual([['a', 'b']]);
    const f = b.flush();
    expect(calls).toEqual([['a', 'b'], ['a']]);
    await release();
    await f;
    await Promise.all(ps);
  });

  it('a failed write rejects alone; the rest of its batch resolves', async () => {
    const { store, release } = fakeStore((w) => w.linkId === 'bad');
    const b = new OutcomeBatcher(store, { maxBatch: 3, maxWaitMs: 10_000 });
    const settled = Promise.allSettled(['a', 'bad', 'c'].map((id) => b.apply(write(id))));
    await release();
    const out = await settled;
    expect(out.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((out[1] as PromiseRejectedResult).reason.message).toBe('bad bad');
  });

  it('maxBatch 1 writes each outcome on its own, straight through', async () => {
    const { store, calls, release } = fakeStore();
    const b = new OutcomeBatcher(store, { maxBatch: 1 });
    const ps = [b.apply(write('a')), b.apply(write('b'))];
    expect(calls).toEqual([['a'], ['b']]);
    await release();
    await Promise.all(ps);
  });

  it('flush writes what waits and resolves once every batch committed', async () => {
    const { store, calls, release } = fakeStore();
    const b = new OutcomeBatcher(store, { maxBatch: 32, maxWaitMs: 10_000 });
    const p = b.apply(write('a'));
    let flushed = false;
    const f = b.flush().then(() => (flushed = true));
    expect(calls).toEqual([['a']]);
    await tick();
    expect(flushed).toBe(false);
    await release();
    await f;
    await p;
  });
});
