import { createRequire } from 'node:module';
import type * as BullMQ from 'bullmq';

// BullMQ's CommonJS index re-exports its ~170 modules. Imported from an ES module, Node's CommonJS lexer first parses
// every one of them to list the names (~0.15 s of every crawler start-up); required, it does not. Values come from
// here; types still come from 'bullmq' (`import type` is erased). Import and require resolve to the same CommonJS
// build (bullmq has no `exports` map), so classes and `instanceof` are the same either way.
const bullmq = createRequire(import.meta.url)('bullmq') as typeof BullMQ;

/** BullMQ's Queue. */
export const Queue: typeof BullMQ.Queue = bullmq.Queue;
export type Queue<DataType = any, ResultType = any, NameType extends string = string> = BullMQ.Queue<DataType, ResultType, NameType>;
/** BullMQ's Worker. */
export const Worker: typeof BullMQ.Worker = bullmq.Worker;
export type Worker<DataType = any, ResultType = any, NameType extends string = string> = BullMQ.Worker<DataType, ResultType, NameType>;
/** Thrown by a processor that moved its job to the delayed set itself. */
export const DelayedError: typeof BullMQ.DelayedError = bullmq.DelayedError;
export type DelayedError = BullMQ.DelayedError;
/** Fails a job for good: no retry. */
export const UnrecoverableError: typeof BullMQ.UnrecoverableError = bullmq.UnrecoverableError;
export type UnrecoverableError = BullMQ.UnrecoverableError;
