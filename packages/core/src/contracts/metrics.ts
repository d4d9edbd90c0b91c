/**
 * What the pipeline reports as it works. @crawler/telemetry implements it with prom-client; the pipeline only
 * knows this interface, so it runs without metrics in tests and tools.
 */
export interface PipelineMetrics {
  /** A job finished on `queue` with `outcome` (done, failed, paused, retried, delayed, ...). */
  jobFinished(queue: string, outcome: string): void;
  /** One fetch by `fetcher` took `durationMs`; outcome is `success` or the error type. */
  fetchObserved(fetcher: string, durationMs: number, outcome: string): void;
  /** The router chose `fetcher` from `source` (learned, probe, hard_coded, ...). */
  decision(source: string, fetcher: string): void;
  /** A probe's body was reused, discarded (a different fetcher was needed) or the probe failed. */
  probe(outcome: 'reused' | 'discarded' | 'failed'): void;
  /** A domain or link was paused after `errorType`. */
  pause(domain: string, errorType: string): void;
  /** An attempt was marked is_banned. */
  ban(domain: string): void;
  /**
   * One event of exit tier `tier` (a tier name, never a proxy URL): a request's `bytes`, whether the site `blocked` it
   * and its `cost` units; a proxy of the tier that failed (`proxyFailed`); or the tier with no healthy proxy left
   * (`unavailable`). Optional: a sink without exits ignores it.
   */
  exitObserved?(tier: string, event: ExitEvent): void;
  /**
   * A response analysis thread (ANALYSIS_THREADS) died, or was stopped because one response took longer than its
   * deadline. Optional: a sink without threads ignores it.
   */
  analysisThreadEvent?(event: 'died' | 'timed_out'): void;
  /**
   * BullMQ found a job of `queue` whose worker stopped renewing its lock (the process died, or its event loop was
   * blocked past the lock) and put it back to run again. Optional: a sink without queues ignores it.
   */
  jobStalled?(queue: string): void;
}

/** What {@link PipelineMetrics.exitObserved} reports. */
export interface ExitEvent {
  bytes?: number;
  blocked?: boolean;
  cost?: number;
  proxyFailed?: boolean;
  /** The request's (or the failed) proxy as `scheme://***@host:port` (core maskProxyUrl): never its credentials. */
  proxy?: string;
  unavailable?: boolean;
}

export const noopMetrics: PipelineMetrics = {
  jobFinished: () => {},
  fetchObserved: () => {},
  decision: () => {},
  probe: () => {},
  pause: () => {},
  ban: () => {},
};
