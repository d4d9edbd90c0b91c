import { describe, expect, it } from 'vitest';
import { nextStepOf } from './next-step.js';

const now = new Date('2026-11-28T12:00:00Z');
const base = { pausedUntil: null, lastErrorType: null };

describe('nextStepOf (GET /links/:id: what happens to this link next)', () => {
  it('a paused link is routed again at its pausedUntil, or as soon as a router takes it once that has passed', () => {
    const later = new Date('2026-11-28T12:30:00Z');
    expect(nextStepOf({ ...base, status: 'paused', pausedUntil: later, lastErrorType: 'rate_limited' }, now)).toEqual({
      action: 'retry_at', at: later, message: 'paused after rate_limited: routed again at 2026-11-28T12:30:00.000Z',
    });
    const past = new Date('2026-11-28T11:00:00Z');
    expect(nextStepOf({ ...base, status: 'paused', pausedUntil: past, lastErrorType: 'network_error' }, now).message).toBe(
      'paused after network_error: due since 2026-11-28T11:00:00.000Z, routed again as soon as a router takes its job',
    );
  });

  it('tells a failure a re-post retries (an outage) from one it does not (the page, a wall)', () => {
    expect(nextStepOf({ ...base, status: 'failed', lastErrorType: 'site_unreachable' }, now).action).toBe('retried_on_repost');
    expect(nextStepOf({ ...base, status: 'failed', lastErrorType: 'rate_limited' }, now).action).toBe('retried_on_repost');
    const wall = nextStepOf({ ...base, status: 'failed', lastErrorType: 'blocked_captcha' }, now);
    expect(wall.action).toBe('final');
    expect(wall.message).toContain('posting it again does not retry it');
  });

  it('a stored page is fetched again by its revisit schedule, or only on a refresh', () => {
    const at = new Date('2026-11-29T00:00:00Z');
    expect(nextStepOf({ ...base, status: 'done', nextFetchAt: at }, now)).toMatchObject({ action: 'revisit_at', at });
    expect(nextStepOf({ ...base, status: 'done' }, now).action).toBe('finished');
  });

  it('an unfinished link is waiting for, or held by, a worker', () => {
    for (const status of ['queued', 'routing', 'fetching']) expect(nextStepOf({ ...base, status }, now)).toMatchObject({ action: 'waiting', at: null });
  });
});
