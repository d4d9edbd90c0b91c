import { describe, expect, it, vi } from 'vitest';
import type { Job } from 'bullmq';
import type { Worker } from '@crawler/queue';
import type { Logger } from '@crawler/core';
import { DelayedError } from '@crawler/queue';
import { WorkerSet } from './worker-set.js';

function fakeWorker(name: string, close: () => Promise<void>, prefix = '{crawler}') {
  const calls = { disconnect: 0 };
  const worker = {
    name,
    opts: { prefix },
    on: () => worker,
    close,
    disconnect: async () => {
      calls.disconnect += 1;
      // BullMQ's disconnect waits for the same connection's end as its close: it may never resolve either.
      return new Promise<void>(() => undefined);
    },
  };
  return { worker: worker as unknown as Worker, calls };
}

describe('WorkerSet.close', () => {
  it('drops the connections of a worker that does not close by the drain deadline and a grace, and closes the rest', async () => {
    vi.useFakeTimers();
    try {
      const warnings: string[] = [];
      const fields: unknown[] = [];
      const logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (o: unknown, msg: string) => void (warnings.push(msg), fields.push(o)), child: () => logger } as unknown as Logger;
      const set = new WorkerSet({ links: { updateUnlessFinished: async () => true }, logger, infraRetryMaxMs: 1_000, served: new Set() });
      // Blocked on a killed Cluster master through a failover: its close never returns. Its shard's prefix names it.
      const stuck = fakeWorker('fetch-simple_http', () => new Promise<void>(() => undefined), '{crawler-s1}');
      const fine = fakeWorker('route', async () => undefined);
      set.add(stuck.worker);
      set.add(fine.worker);
      let closed = false;
      const closing = set.close(1_000).then(() => (closed = true));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(set.signal.aborted).toBe(true);
      expect(closed).toBe(false);
      await vi.advanceTimersByTimeAsync(5_000);
      await closing;
      expect(closed).toBe(true);
      expect(stuck.calls.disconnect).toBe(1);
      expect(fine.calls.disconnect).toBe(0);
      expect(warnings).toEqual(['worker did not close in time: its connections are dropped']);
      expect(fields).toEqual([{ queue: 'fetch-simple_http', prefix: '{crawler-s1}', waitedMs: 6_000 }]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('WorkerSet.add', () => {
  it('logs a worker error storm once per interval, with how many, not once per error', () => {
    const errors: Array<{ o: Record<string, unknown>; msg: string }> = [];
    const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (o: Record<string, unknown>, msg: string) => void errors.push({ o, msg }), child: () => logger } as unknown as Logger;
    const set = new WorkerSet({ links: { updateUnlessFinished: async () => true }, logger, infraRetryMaxMs: 1_000, served: new Set() });
    const handlers = new Map<string, (...args: unknown[]) => void>();
    const worker = { name: 'fetch-simple_http', on: (event: string, fn: (...args: unknown[]) => void) => (handlers.set(event, fn), worker) };
    set.add(worker as unknown as Worker);
    // A full Redis refuses BullMQ's fetch of the next job, and BullMQ asks again at once: 125,947 lines in 40 s.
    const oom = new Error("OOM command not allowed when used memory > 'maxmemory'.");
    for (let i = 0; i < 5_000; i++) handlers.get('error')!(oom);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toBe('worker error');
  });
});

describe('WorkerSet.guard', () => {
  it('parks jobs through an outage with one warning per interval, not one per job', async () => {
    const warnings: string[] = [];
    const debug: string[] = [];
    const logger = { debug: (_o: unknown, msg: string) => void debug.push(msg), info: () => undefined, error: () => undefined, warn: (_o: unknown, msg: string) => void warnings.push(msg), child: () => logger } as unknown as Logger;
    const set = new WorkerSet({ links: { updateUnlessFinished: async () => true }, logger, infraRetryMaxMs: 1_000, served: new Set() });
    const guarded = set.guard(async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
    });
    const job = () => ({ id: 'j', queueName: 'route', attemptsStarted: 1, moveToDelayed: async () => undefined }) as unknown as Parameters<typeof guarded>[0];
    for (let i = 0; i < 400; i++) await expect(guarded(job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(warnings).toEqual(['infrastructure unreachable: 1 jobs parked for a retry since the last warning']);
    expect(debug).toHaveLength(399);
  });
});

describe('WorkerSet.signal', () => {
  it('takes a listener from every fetch in flight without a MaxListenersExceededWarning on stderr', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: () => undefined, child: () => logger } as unknown as Logger;
      const set = new WorkerSet({ links: { updateUnlessFinished: async () => true }, logger, infraRetryMaxMs: 1_000, served: new Set() });
      // What 32 fetch slots' waiters and requests do to the shared signal.
      for (let i = 0; i < 40; i++) set.signal.addEventListener('abort', () => undefined, { once: true });
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('WorkerSet.guard, Postgres unable to take writes', () => {
  const readOnly = () => Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' });
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet } as unknown as Logger;
  const job = (id: string) => ({ id, queueName: 'route', attemptsStarted: 1, moveToDelayed: async () => undefined }) as unknown as Job;

  it('parks the job that met it, then holds every job before it runs until a probe finds Postgres writable', async () => {
    vi.useFakeTimers();
    try {
      let writable = false;
      let probes = 0;
      const set = new WorkerSet({
        links: { updateUnlessFinished: async () => true },
        logger: quiet,
        infraRetryMaxMs: 1_000,
        served: new Set(),
        probeDatabase: async () => {
          probes += 1;
          if (!writable) throw readOnly();
        },
      });
      const ran: string[] = [];
      const process = set.guard(async (j: Job) => {
        ran.push(j.id!);
        if (!writable) throw readOnly();
        return 'done';
      });
      await expect(process(job('a'))).rejects.toBeInstanceOf(DelayedError);
      // Held: none of them fetches a page whose outcome cannot be written.
      const held = [process(job('b')), process(job('c'))];
      await vi.advanceTimersByTimeAsync(5_000);
      expect(ran).toEqual(['a']);
      expect(probes).toBe(5);
      writable = true;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(await Promise.all(held)).toEqual(['done', 'done']);
      expect(ran).toEqual(['a', 'b', 'c']);
      expect(await process(job('d'))).toBe('done');
      expect(probes).toBe(6);
    } finally {
      vi.useRealTimers();
    }
  });

  it('lets jobs run on through a Redis outage or a serialization conflict (Postgres takes writes)', async () => {
    let probes = 0;
    const set = new WorkerSet({ links: { updateUnlessFinished: async () => true }, logger: quiet, infraRetryMaxMs: 1_000, served: new Set(), probeDatabase: async () => void (probes += 1) });
    let n = 0;
    const process = set.guard(async () => {
      n += 1;
      if (n === 1) throw new Error('Connection is closed.');
      if (n === 2) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      return 'done';
    });
    await expect(process(job('a'))).rejects.toBeInstanceOf(DelayedError);
    await expect(process(job('b'))).rejects.toBeInstanceOf(DelayedError);
    expect(await process(job('c'))).toBe('done');
    expect(probes).toBe(0);
  });

  it('gives up waiting on shutdown: the held job is parked, not failed', async () => {
    const parked: number[] = [];
    const set = new WorkerSet({ links: { updateUnlessFinished: async () => true }, logger: quiet, infraRetryMaxMs: 1_000, served: new Set(), probeDatabase: async () => Promise.reject(readOnly()) });
    const process = set.guard(async () => Promise.reject(readOnly()));
    const parking = (id: string) => ({ id, queueName: 'route', attemptsStarted: 1, moveToDelayed: async (t: number) => void parked.push(t) }) as unknown as Job;
    await expect(process(parking('a'))).rejects.toBeInstanceOf(DelayedError);
    const held = process(parking('b'));
    held.catch(() => undefined);
    // A worker still draining when the deadline passes: the deadline aborts what waits.
    set.add(fakeWorker('route', () => new Promise<void>((r) => setTimeout(r, 50))).worker);
    await set.close(0);
    await expect(held).rejects.toBeInstanceOf(DelayedError);
    expect(parked).toHaveLength(2);
  });
});
