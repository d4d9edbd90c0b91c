import { ScheduleInputError, parseDurationSeconds, parseRevisitFlag, type RevisitPolicy } from '@crawler/core';
import { UsageError } from '../command.js';

/** The refresh and revisit flags every enqueuing command takes. */
export const SCHEDULE_OPTIONS = {
  'max-age': { type: 'string' },
  revisit: { type: 'string' },
} as const;

export const SCHEDULE_USAGE = '[--max-age 0|30m|6h|7d] [--revisit 6h|adaptive:MIN..MAX[@START]|off]';

/**
 * `--max-age` (fetch a stored page again when its last visit is older; 0: now) and `--revisit` (a fixed interval,
 * `adaptive:10m..7d`, or `off` to remove a link's schedule), checked; a bad value is a usage error naming the flag.
 */
export function parseScheduleFlags(
  values: { 'max-age'?: string; revisit?: string },
  minRevisitIntervalSeconds: number,
  usage: string,
): { maxAgeSeconds?: number; revisit?: RevisitPolicy | null } {
  try {
    const out: { maxAgeSeconds?: number; revisit?: RevisitPolicy | null } = {};
    if (values['max-age'] !== undefined) out.maxAgeSeconds = parseDurationSeconds(values['max-age'], '--max-age');
    if (values.revisit !== undefined) out.revisit = values.revisit === 'off' ? null : parseRevisitFlag(values.revisit, minRevisitIntervalSeconds);
    return out;
  } catch (err) {
    if (err instanceof ScheduleInputError) throw new UsageError(`${err.message}\n${usage}`);
    throw err;
  }
}
