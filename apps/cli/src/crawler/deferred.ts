/**
 * A CLI command stops on links whose jobs Redis could not take (enqueueLinks and crawl creation store them and answer
 * them deferred, which a producer behind the API wants): the person at the terminal is told at once what Redis said,
 * and that the links are kept (cli.ts redisRefusal), instead of a crawl that waits for jobs that are not there.
 */
export function failIfDeferred(deferred: { reason: string } | undefined): void {
  if (!deferred) return;
  const err = new Error(deferred.reason);
  if (/^Reached the max retries per request/.test(deferred.reason)) err.name = 'MaxRetriesPerRequestError';
  throw err;
}
