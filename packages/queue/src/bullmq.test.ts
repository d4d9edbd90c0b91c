import * as imported from 'bullmq';
import { describe, expect, it } from 'vitest';
import { DelayedError, Queue, UnrecoverableError, Worker } from './bullmq.js';

describe('bullmq (required, not imported)', () => {
  it('hands out the very classes an ES-module import of bullmq gives, so instanceof agrees across the codebase', () => {
    expect(Queue).toBe(imported.Queue);
    expect(Worker).toBe(imported.Worker);
    expect(DelayedError).toBe(imported.DelayedError);
    expect(UnrecoverableError).toBe(imported.UnrecoverableError);
    expect(new DelayedError()).toBeInstanceOf(imported.DelayedError);
  });
});
