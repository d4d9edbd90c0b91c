import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BaseFetcher, SETTLE_GRACE_MS, type PreparedRequest } from './base-fetcher.js';
import type { FetchResult } from './contract.js';
import { resolveFetchersOptions } from './options.js';

/** A fetcher that does what `work` does with the prepared request, however long that takes. */
class ScriptedFetcher extends BaseFetcher {
  readonly name = 'scripted';
  constructor(private readonly work: (req: PreparedRequest) => Promise<FetchResult>) {
    super(resolveFetchersOptions({}), 'scripted');
  }
  protected fetchPrepared(req: PreparedRequest): Promise<FetchResult> {
    return this.work(req);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function resultFor(req: PreparedRequest): FetchResult {
  return { fetcher: 'scripted', url: req.originalUrl, finalUrl: req.originalUrl, status: 200, headers: {}, body: new Uint8Array(0), contentType: null, text: null, redirectChain: [], timings: { startedAt: req.startedAt, headersMs: null, totalMs: 0 } };
}

const never = () => new Promise<FetchResult>(() => undefined);

describe('a fetch past its deadline', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('settles as a timeout once the grace has passed, when the fetcher never ends (a library call with no timeout)', async () => {
    const outcome = new ScriptedFetcher(never).fetch({ url: 'http://site.test/', timeoutMs: 1_000 }).then(
      () => 'resolved',
      (err: { code?: string }) => err.code,
    );
    await vi.advanceTimersByTimeAsync(1_000 + SETTLE_GRACE_MS - 1);
    // Still within the grace: the fetcher may yet end on its own.
    expect(await Promise.race([outcome, Promise.resolve('pending')])).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toBe('timeout');
  });

  it("settles as aborted once the grace has passed after the caller's abort", async () => {
    const caller = new AbortController();
    const outcome = new ScriptedFetcher(never).fetch({ url: 'http://site.test/', timeoutMs: 60_000, signal: caller.signal }).catch((err: { code?: string }) => err.code);
    caller.abort();
    await vi.advanceTimersByTimeAsync(SETTLE_GRACE_MS);
    expect(await outcome).toBe('aborted');
  });

  it('keeps what the fetcher ends with within the grace', async () => {
    const windsDown = (req: PreparedRequest) =>
      new Promise<FetchResult>((resolve) => req.signal.addEventListener('abort', () => setTimeout(() => resolve(resultFor(req)), SETTLE_GRACE_MS / 2)));
    const outcome = new ScriptedFetcher(windsDown).fetch({ url: 'http://site.test/', timeoutMs: 1_000 });
    await vi.advanceTimersByTimeAsync(1_000 + SETTLE_GRACE_MS / 2);
    expect((await outcome).status).toBe(200);
  });
});
