import { UnrecoverableError } from './bullmq.js';
import type { z } from 'zod';

/**
 * Parse a job's data with its schema before use. A bad payload fails the job for good (UnrecoverableError: retrying
 * cannot fix the data) with a message naming the queue, the job and the offending fields; the worker keeps running.
 */
export function parseJobData<S extends z.ZodType>(schema: S, data: unknown, where: { queue: string; jobId?: string }): z.infer<S> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  throw new InvalidJobPayloadError(`invalid ${where.queue} job ${where.jobId ?? '?'}: ${issues}`);
}

/** A job whose data does not match the catalog's schema. `code` is stable for logs and metrics. */
export class InvalidJobPayloadError extends UnrecoverableError {
  override name = 'InvalidJobPayloadError';
  readonly code = 'invalid_payload';
}
