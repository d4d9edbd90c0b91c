import { describe, expect, it } from 'vitest';
import { CrawlerError } from '@crawler/core';
import { infraRetryDelayMs, isDatabaseUnavailable, isInfraError, isStalledError } from './infra-errors.js';

describe('isInfraError', () => {
  it('recognises Postgres and Redis being away, as thrown by pg, Prisma and ioredis', () => {
    expect(isInfraError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isInfraError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isInfraError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isInfraError(Object.assign(new Error("Can't reach database server"), { code: 'P1001' }))).toBe(true);
    expect(isInfraError(new CrawlerError('db_unavailable', 'log attempts: gone'))).toBe(true);
    expect(isInfraError(new Error('Connection is closed.'))).toBe(true);
    expect(isInfraError(Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' }))).toBe(true);
  });

  it('recognises a Postgres that answers but cannot take writes now: full of clients, out of disk, read-only', () => {
    // A fleet past max_connections, a full disk, a failover onto a standby or default_transaction_read_only for
    // maintenance: the same write goes through once the operator has fixed it, so the job waits instead of failing.
    expect(isInfraError(Object.assign(new Error('sorry, too many clients already'), { code: '53300' }))).toBe(true);
    expect(isInfraError(Object.assign(new Error('could not extend file "base/16384/16390": No space left on device'), { code: '53100' }))).toBe(true);
    expect(isInfraError(Object.assign(new Error('out of memory'), { code: '53200' }))).toBe(true);
    expect(isInfraError(Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' }))).toBe(true);
  });

  it('recognises a Redis that answers but refuses writes: full (maxmemory, noeviction) or unable to persist', () => {
    // 40 s of a full Redis had failed 526 of 1,000 links for good with internal_error: each job's retries all met it.
    const replyError = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
    expect(isInfraError(replyError("OOM command not allowed when used memory > 'maxmemory'. script: 6f45cc9f5afb0fcbb7674eba982915fcc7338fd5, on @user_script:43."))).toBe(true);
    expect(isInfraError(replyError("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled"))).toBe(true);
  });

  it('recognises a Redis Cluster that is down longer than ioredis retries (a master without a replica died)', () => {
    expect(isInfraError(new Error('Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down'))).toBe(true);
    expect(isInfraError(Object.assign(new Error('CLUSTERDOWN Hash slot not served'), { name: 'ReplyError' }))).toBe(true);
  });

  it('leaves the page’s and the code’s own errors alone', () => {
    expect(isInfraError(new CrawlerError('invalid_content', 'body must be a Uint8Array'))).toBe(false);
    expect(isInfraError(new CrawlerError('timeout', 'the site was slow'))).toBe(false);
    expect(isInfraError(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(false);
    expect(isInfraError(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(false);
  });

  it('knows BullMQ’s stalled-job failure and doubles the retry delay up to the cap', () => {
    expect(isStalledError(new Error('job stalled more than allowable limit'))).toBe(true);
    expect(isStalledError(new Error('boom'))).toBe(false);
    expect([1, 2, 3, 7, 40].map((n) => infraRetryDelayMs(n, 60_000))).toEqual([1_000, 2_000, 4_000, 60_000, 60_000]);
  });
});

describe('isDatabaseUnavailable', () => {
  it('says Postgres cannot take writes: read-only, restarting, unreachable; not Redis away, not a conflict, not a bug', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(new CrawlerError('db_unavailable', 'write outcomes: gone'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection is closed.'))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('could not serialize access'), { code: '40001' }))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
  });
});
