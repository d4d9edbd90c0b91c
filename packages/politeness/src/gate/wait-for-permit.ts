import type { DomainPermit, GateDecision, PolitenessGate } from '@crawler/core';

export interface WaitForPermitOptions {
  /**
   * Longest total wait in milliseconds. A denial whose retry would pass it is returned instead, so a worker can
   * hand the job back to the queue (delayed) rather than hold a concurrency slot of its own idle. @defaultValue 5000
   */
  maxWaitMs?: number;
  /** Stops waiting (shutdown); the latest denial is returned. */
  signal?: AbortSignal;
}

/**
 * Ask the gate until it grants, sleeping exactly the retry it hints each time (no busy loop). Returns the grant,
 * or the denial that would have made the total wait exceed `maxWaitMs` (a pause of minutes comes straight back).
 */
export async function waitForPermit(gate: PolitenessGate, domain: string, options: WaitForPermitOptions = {}): Promise<GateDecision> {
  const maxWaitMs = options.maxWaitMs ?? 5000;
  let waitedMs = 0;
  for (;;) {
    const decision = await gate.acquire(domain);
    if (decision.granted || options.signal?.aborted || waitedMs + decision.retryInMs > maxWaitMs) return decision;
    await sleep(decision.retryInMs, options.signal);
    waitedMs += decision.retryInMs;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Run `work` holding a permit for `domain`, releasing it whatever happens. Throws nothing of its own: a denial is returned. */
export async function withPermit<T>(
  gate: PolitenessGate,
  domain: string,
  work: (permit: DomainPermit) => Promise<T>,
  options?: WaitForPermitOptions,
): Promise<{ granted: true; value: T } | Extract<GateDecision, { granted: false }>> {
  const decision = await waitForPermit(gate, domain, options);
  if (!decision.granted) return decision;
  try {
    return { granted: true, value: await work(decision.permit) };
  } finally {
    await decision.permit.release();
  }
}
