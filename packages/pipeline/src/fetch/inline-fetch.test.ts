import { describe, expect, it } from 'vitest';
import { silentLogger } from '@crawler/core';
import type { FetchJobInput } from '@crawler/queue';
import { DelayedError, delayJob, type JobHandle } from '../job-control.js';
import { FetchSlots, InlineFetcher } from './inline-fetch.js';
import type { FetchJobHandle } from './fetch-processor.js';
import { inlineFetchLimit } from '../runtime/crawler-runtime.js';

const input = (n: number): FetchJobInput => ({
  linkId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  url: `https://a.example/${n}`,
  fetcher: 'simple_http',
  selectionSource: 'learned',
  attemptsBefore: 2,
  generation: 1,
});

/** A link store whose writes nobody reads. */
const noLinks = { updateUnlessFinished: async () => true };

/** The router's decision an inline fetch carries, unwritten. */
const decided = { status: 'fetching', fetcher: 'simple_http', selectionSource: 'learned' } as const;

function harness(over: { slots?: number; maxInFlight?: number; processFetch?: (job: FetchJobHandle) => Promise<unknown>; linkWrite?: () => Promise<boolean> } = {}) {
  const slots = new FetchSlots([['simple_http', over.slots ?? 2]]);
  const enqueued: { input: FetchJobInput; delayMs?: number }[] = [];
  const jobs: FetchJobHandle[] = [];
  // Each write of a link, in order with the fetch jobs added: [what, linkId, change or input].
  const log: unknown[][] = [];
  const inline = new InlineFetcher({
    slots,
    maxInFlight: over.maxInFlight ?? 8,
    logger: silentLogger,
    links: {
      updateUnlessFinished: async (id, change) => {
        log.push(['link', id, change]);
        return over.linkWrite ? over.linkWrite() : true;
      },
    },
    enqueueFetch: async (i, delayMs) => {
      enqueued.push({ input: i, ...(delayMs !== undefined ? { delayMs } : {}) });
      log.push(['job', i.linkId]);
    },
    processFetch: async (job) => {
      jobs.push(job);
      return over.processFetch ? over.processFetch(job) : { outcome: 'done' };
    },
  });
  return { slots, inline, enqueued, jobs, log };
}

describe('FetchSlots', () => {
  it('shares a fetcher’s slots between jobs that wait and claims that do not', async () => {
    const slots = new FetchSlots([['direct_access', 2]]);
    const a = slots.tryTake('simple_http');
    const b = await slots.take('simple_http');
    expect(a).not.toBeNull();
    expect(slots.tryTake('simple_http')).toBeNull();
    expect(slots.inUse('simple_http')).toBe(2);
    let third = false;
    const waiting = slots.take('simple_http').then((r) => {
      third = true;
      return r;
    });
    await Promise.resolve();
    expect(third).toBe(false);
    a!();
    a!(); // a release counts once
    // The released slot went to the waiting job: a claim does not take it from under it.
    expect(slots.tryTake('simple_http')).toBeNull();
    const c = await waiting;
    expect(third).toBe(true);
    b();
    expect(slots.inUse('simple_http')).toBe(1);
    c();
    expect(slots.inUse('simple_http')).toBe(0);
    // A fetcher without slots: claims get none, jobs are not limited.
    expect(slots.tryTake('playwright')).toBeNull();
    (await slots.take('playwright'))();
  });
});

describe('InlineFetcher', () => {
  it('runs the fetch processor on a job of its own that carries the fetch job’s id, data and queue, then frees the slot', async () => {
    const h = harness();
    const claim = h.inline.claim('simple_http');
    // The slot is taken when the fetch runs, not by the claim.
    expect(h.slots.inUse('simple_http')).toBe(0);
    await claim!.run(input(1), 'route-1');
    expect(h.jobs).toHaveLength(1);
    expect(h.jobs[0]).toMatchObject({ id: `${input(1).linkId}.g1.a2.simple_http`, queueName: 'fetch-simple_http', attemptsStarted: 1, data: input(1) });
    expect(h.enqueued).toEqual([]);
    expect(h.slots.inUse('simple_http')).toBe(0);
    await expect(claim!.run(input(1), 'route-1')).rejects.toThrow(/runs once/);
  });

  it('waits for a slot the fetch workers hold, and claims nothing past as many inline fetches as it may hold', async () => {
    const full = harness({ slots: 1 });
    const taken = full.slots.tryTake('simple_http');
    const waiting = full.inline.claim('simple_http')!.run(input(1), 'route-1');
    await new Promise((r) => setImmediate(r));
    expect(full.jobs).toHaveLength(0);
    taken!();
    await waiting;
    expect(full.jobs).toHaveLength(1);
    expect(full.enqueued).toEqual([]);

    const capped = harness({ slots: 4, maxInFlight: 1 });
    const first = capped.inline.claim('simple_http');
    expect(capped.inline.claim('simple_http')).toBeNull();
    await first!.run(input(1), 'route-1');
    expect(capped.inline.claim('simple_http')).not.toBeNull();
    expect(harness().inline.claim('playwright')).toBeNull();
  });

  it('gives the slot back once the request is done, before the outcome is written', async () => {
    let written!: () => void;
    const writing = new Promise<void>((r) => (written = r));
    const slots = new FetchSlots([['simple_http', 1]]);
    const inline = new InlineFetcher({
      slots, maxInFlight: 2, logger: silentLogger, links: noLinks, enqueueFetch: async () => undefined,
      processFetch: async (_job, _token, hooks) => {
        hooks?.onRequestDone?.();
        await writing;
      },
    });
    const first = inline.claim('simple_http')!.run(input(1), 'route-1');
    await new Promise((r) => setImmediate(r));
    // The first page's outcome is still being written: its slot already serves the next request.
    expect(slots.inUse('simple_http')).toBe(0);
    const second = inline.claim('simple_http')!.run(input(2), 'route-2');
    await new Promise((r) => setImmediate(r));
    expect(slots.inUse('simple_http')).toBe(0);
    written();
    await Promise.all([first, second]);
    expect(slots.inUse('simple_http')).toBe(0);
  });

  it('hands the link to the fetch queue when shutdown comes while it waits for a slot', async () => {
    const slots = new FetchSlots([['simple_http', 1]]);
    const abort = new AbortController();
    const enqueued: FetchJobInput[] = [];
    const ran: string[] = [];
    const inline = new InlineFetcher({
      slots, maxInFlight: 2, logger: silentLogger, links: noLinks, signal: abort.signal,
      enqueueFetch: async (i) => void enqueued.push(i),
      processFetch: async (job) => void ran.push(String(job.id)),
    });
    const held = slots.tryTake('simple_http');
    const waiting = inline.claim('simple_http')!.run(input(3), 'route-3');
    abort.abort();
    await waiting;
    expect(ran).toEqual([]);
    expect(enqueued).toEqual([input(3)]);
    held!();
    expect(slots.inUse('simple_http')).toBe(0);
  });

  it('turns a parked job (a politeness wait) into the delayed fetch job the router would have added', async () => {
    const h = harness({
      processFetch: async (job) => delayJob(job, undefined, 1_500),
    });
    await h.inline.claim('simple_http')!.run(input(2), 'route-2');
    expect(h.enqueued).toHaveLength(1);
    expect(h.enqueued[0]!.input).toEqual(input(2));
    expect(h.enqueued[0]!.delayMs).toBeGreaterThan(1_000);
    expect(h.enqueued[0]!.delayMs).toBeLessThanOrEqual(1_500);
    expect(h.slots.inUse('simple_http')).toBe(0);
  });

  it('hands the link to the fetch queue when the fetch throws, and frees the slot', async () => {
    const h = harness({
      processFetch: async () => {
        throw new Error('a bug in an extractor');
      },
    });
    await h.inline.claim('simple_http')!.run(input(3), 'route-3');
    expect(h.enqueued).toEqual([{ input: input(3) }]);
    expect(h.slots.inUse('simple_http')).toBe(0);
  });

  it('fails the route job, handing nothing on, when its outcome cannot be written (Postgres read-only or away)', async () => {
    // A fetch job added now would fetch the page again at once and meet the same outage: the route job waits it out.
    for (const err of [Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' }), Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })]) {
      const h = harness({
        processFetch: async () => {
          throw err;
        },
      });
      await expect(h.inline.claim('simple_http')!.run(input(4), 'route-4')).rejects.toBe(err);
      expect(h.enqueued).toEqual([]);
      expect(h.log).toEqual([]);
      expect(h.slots.inUse('simple_http')).toBe(0);
    }
  });

  it('fails the route job when the link cannot be handed over either (BullMQ retries it)', async () => {
    const slots = new FetchSlots([['simple_http', 1]]);
    const redisAway = (processFetch: (job: JobHandle) => Promise<unknown>) =>
      new InlineFetcher({
        slots,
        maxInFlight: 1,
        logger: silentLogger, links: noLinks,
        enqueueFetch: async () => {
          throw new Error('redis went away');
        },
        processFetch,
      });
    const inline = redisAway(async () => {
      throw new DelayedError();
    });
    // A parked job whose delayed job could not be added: moveToDelayed threw before DelayedError.
    const parking = redisAway(async (job) => delayJob(job, undefined, 10));
    await inline.claim('simple_http')!.run(input(4), 'route-4');
    await expect(parking.claim('simple_http')!.run(input(5), 'route-5')).rejects.toThrow(/redis went away/);
    expect(slots.inUse('simple_http')).toBe(0);
  });
});

describe('InlineFetcher, the router\'s unwritten decision', () => {
  it('leaves the decision to the outcome\'s write: nothing written here when the fetch ends with an outcome', async () => {
    const h = harness({
      // The fetch processor's outcome write carries the pending change and marks it written (fetch-outcome.ts).
      processFetch: async (job) => void (job.pendingLink!.change = null),
    });
    await h.inline.claim('simple_http')!.run(input(1), 'route-1', undefined, decided);
    expect(h.jobs[0]!.pendingLink).toEqual({ change: null });
    expect(h.log).toEqual([]);
  });

  it('writes the decision before the fetch job a parked or failed fetch becomes, unless a write carried it already', async () => {
    const parked = harness({ processFetch: async (job) => delayJob(job, undefined, 1_500) });
    await parked.inline.claim('simple_http')!.run(input(2), 'route-2', undefined, decided);
    expect(parked.log).toEqual([['link', input(2).linkId, decided], ['job', input(2).linkId]]);

    const thrown = harness({
      processFetch: async () => {
        throw new Error('postgres went away');
      },
    });
    await thrown.inline.claim('simple_http')!.run(input(3), 'route-3', undefined, decided);
    expect(thrown.log).toEqual([['link', input(3).linkId, decided], ['job', input(3).linkId]]);

    // A politeness wait after a retry wrote the attempts (and the decision with them): only the job is added.
    const written = harness({
      processFetch: async (job) => {
        job.pendingLink!.change = null;
        return delayJob(job, undefined, 1_500);
      },
    });
    await written.inline.claim('simple_http')!.run(input(4), 'route-4', undefined, decided);
    expect(written.log).toEqual([['job', input(4).linkId]]);
  });

  it('adds no fetch job for a link finished meanwhile, and adds it when the decision cannot be written', async () => {
    const finished = harness({ linkWrite: async () => false, processFetch: async (job) => delayJob(job, undefined, 100) });
    await finished.inline.claim('simple_http')!.run(input(5), 'route-5', undefined, decided);
    expect(finished.enqueued).toEqual([]);

    const away = harness({
      linkWrite: async () => {
        throw new Error('postgres went away');
      },
      processFetch: async () => {
        throw new Error('postgres went away');
      },
    });
    await away.inline.claim('simple_http')!.run(input(6), 'route-6', undefined, decided);
    expect(away.enqueued).toEqual([{ input: input(6) }]);
    expect(away.slots.inUse('simple_http')).toBe(0);
  });
});

describe('InlineFetcher, duplicates', () => {
  it('fetches a link once when two route jobs of it run at once (a resubmission racing a resume), here and across the fleet', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const h = harness({ slots: 4, processFetch: () => gate });
    const first = h.inline.claim('simple_http')!.run(input(6), 'route-a');
    await Promise.resolve();
    // Same process: the second run sees the first one running.
    await h.inline.claim('simple_http')!.run(input(6), 'route-b');
    release();
    await first;
    expect(h.jobs).toHaveLength(1);

    const held = new Map<string, string>();
    const claims = {
      claim: async (id: string, owner: string) => (held.get(id) ?? (held.set(id, owner), owner)) === owner,
      release: async (id: string, owner: string) => void (held.get(id) === owner && held.delete(id)),
    };
    const fleet = (name: string) => {
      const jobs: string[] = [];
      const inline = new InlineFetcher({ slots: new FetchSlots([['simple_http', 1]]), maxInFlight: 1, logger: silentLogger, links: noLinks, claims, enqueueFetch: async () => undefined, processFetch: async () => void jobs.push(name) });
      return { inline, jobs };
    };
    const [p1, p2] = [fleet('p1'), fleet('p2')];
    held.set(`${input(7).linkId}.g1.a2.simple_http`, 'route-a');
    // Another process holds the claim: nothing fetched; the holder's own retry (same route job) may fetch.
    await p2.inline.claim('simple_http')!.run(input(7), 'route-b');
    expect(p2.jobs).toEqual([]);
    await p1.inline.claim('simple_http')!.run(input(7), 'route-a');
    expect(p1.jobs).toEqual(['p1']);
    await new Promise((r) => setImmediate(r));
    expect(held.size).toBe(0);
  });
});

describe('inlineFetchLimit', () => {
  const fetchers = [
    { name: 'simple_http', concurrency: 8 },
    { name: 'playwright', concurrency: 2 },
    { name: 'playwright_stealth', concurrency: 1 },
  ];
  const simple = [fetchers[0]!];
  it('lets every route slot the browsers leave carry an inline fetch, those beyond the plain-HTTP slots waiting for one', () => {
    // The default router: the fetchers' slots and half of plain HTTP's again.
    expect(inlineFetchLimit({ routerConcurrency: 15, fetchers }, simple)).toBe(12);
    expect(inlineFetchLimit({ routerConcurrency: 48, fetchers: [{ name: 'simple_http', concurrency: 32 }] }, [{ name: 'simple_http', concurrency: 32 }])).toBe(48);
    expect(inlineFetchLimit({ routerConcurrency: 11, fetchers }, simple)).toBe(8);
  });
  it('keeps the browsers’ route slots and one more free under a smaller router, and none inline when nothing is left', () => {
    expect(inlineFetchLimit({ routerConcurrency: 8, fetchers }, simple)).toBe(4);
    expect(inlineFetchLimit({ routerConcurrency: 4, fetchers }, simple)).toBe(0);
    expect(inlineFetchLimit({ routerConcurrency: 1, fetchers: simple }, simple)).toBe(0);
    expect(inlineFetchLimit({ routerConcurrency: 11, fetchers }, [])).toBe(0);
  });
});
