/**
 * Refresh ages and revisit policies as producers give them (`30m`, `{ mode: 'adaptive', … }`), checked into plain
 * data. Pure: the API, the CLI and the pipeline share one reading and one set of messages.
 */

/** A revisit policy, intervals in seconds. */
export type RevisitPolicy =
  | { mode: 'fixed'; intervalSeconds: number }
  | {
      mode: 'adaptive';
      /** Where the interval starts. @defaultValue minSeconds */
      intervalSeconds: number;
      minSeconds: number;
      maxSeconds: number;
    };

/**
 * Adaptive factors, as Nutch's AdaptiveFetchSchedule ships them: a visit that found a new version multiplies the
 * interval by (1 − DEC), one that found the same page by (1 + INC); a first or failed visit leaves it. The migration's
 * trigger applies the same numbers; Nutch warns that rates above 0.4 make the interval swing without tracking change.
 */
export const ADAPTIVE_REVISIT = { incRate: 0.4, decRate: 0.2 } as const;

/** Input that cannot be a duration, age or policy, with the field at fault. */
export class ScheduleInputError extends Error {
  readonly code = 'invalid_schedule_input';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ScheduleInputError';
  }
}

/**
 * Longest age or interval accepted, 100 years in seconds. Postgres adds them to timestamps (next_fetch_at, the refresh
 * cut-off) as intervals: far past this they overflow ('interval out of range'), and a revisit interval that did would
 * fail every write of its link's outcome.
 */
export const MAX_SCHEDULE_SECONDS = 3_155_760_000;

const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 };

/**
 * Seconds in a duration: `0`, `90` (seconds), `500ms`, `30s`, `30m`, `6h`, `7d`, `2w`, or several (`1h30m`).
 * Negative, empty or unparsable input throws {@link ScheduleInputError} naming `field`.
 */
export function parseDurationSeconds(input: string | number, field: string): number {
  if (typeof input === 'number') return checkSeconds(input, field);
  const text = input.trim().toLowerCase();
  if (/^-/.test(text)) throw new ScheduleInputError(field, `${field} must not be negative (got ${JSON.stringify(input)})`);
  if (/^\d+(\.\d+)?$/.test(text)) return checkSeconds(Number(text), field);
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) {
    throw new ScheduleInputError(field, `${field} must be a duration such as 0, 90, 30s, 30m, 6h or 7d (got ${JSON.stringify(input)})`);
  }
  return checkSeconds(parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0), field);
}

function checkSeconds(value: number, field: string): number {
  if (!Number.isFinite(value)) throw new ScheduleInputError(field, `${field} must be a finite number of seconds (got ${value})`);
  if (value < 0) throw new ScheduleInputError(field, `${field} must not be negative (got ${value})`);
  if (value > MAX_SCHEDULE_SECONDS) throw new ScheduleInputError(field, `${field} must be at most ${MAX_SCHEDULE_SECONDS} s (100 years) (got ${value})`);
  return value;
}

/** A refresh age in seconds, as the API takes it (`maxAgeSeconds`): a finite number ≥ 0. */
export function checkMaxAgeSeconds(value: unknown, field = 'maxAgeSeconds'): number {
  if (typeof value !== 'number') throw new ScheduleInputError(field, `${field} must be a number of seconds ≥ 0 (got ${JSON.stringify(value)})`);
  return checkSeconds(value, field);
}

/** A policy as given, before it is checked (API body, parsed CLI flag). */
export interface RevisitPolicyInput {
  mode?: unknown;
  intervalSeconds?: unknown;
  minSeconds?: unknown;
  maxSeconds?: unknown;
}

/**
 * Check a policy: every interval a finite number of seconds, none below `minIntervalSeconds` (the fleet's floor,
 * REVISIT_MIN_INTERVAL_S: a revisit every second of a million pages is an attack, not a crawl), min ≤ start ≤ max.
 * Throws {@link ScheduleInputError} naming the field (prefixed with `field`).
 */
export function checkRevisitPolicy(input: RevisitPolicyInput, minIntervalSeconds: number, field = 'revisit'): RevisitPolicy {
  const seconds = (name: 'intervalSeconds' | 'minSeconds' | 'maxSeconds'): number => {
    const value = input[name];
    const f = `${field}.${name}`;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new ScheduleInputError(f, `${f} must be a number of seconds (got ${JSON.stringify(value)})`);
    if (value < minIntervalSeconds) throw new ScheduleInputError(f, `${f} must be at least ${minIntervalSeconds} s, the configured minimum (REVISIT_MIN_INTERVAL_S) (got ${value})`);
    if (value > MAX_SCHEDULE_SECONDS) throw new ScheduleInputError(f, `${f} must be at most ${MAX_SCHEDULE_SECONDS} s (100 years) (got ${value})`);
    return value;
  };
  if (input.mode === 'fixed') return { mode: 'fixed', intervalSeconds: seconds('intervalSeconds') };
  if (input.mode === 'adaptive') {
    const minSeconds = seconds('minSeconds');
    const maxSeconds = seconds('maxSeconds');
    if (maxSeconds < minSeconds) throw new ScheduleInputError(`${field}.maxSeconds`, `${field}.maxSeconds must be ≥ ${field}.minSeconds (got ${maxSeconds} < ${minSeconds})`);
    const intervalSeconds = input.intervalSeconds === undefined ? minSeconds : seconds('intervalSeconds');
    if (intervalSeconds > maxSeconds) throw new ScheduleInputError(`${field}.intervalSeconds`, `${field}.intervalSeconds must be within minSeconds..maxSeconds (got ${intervalSeconds})`);
    return { mode: 'adaptive', intervalSeconds, minSeconds, maxSeconds };
  }
  throw new ScheduleInputError(`${field}.mode`, `${field}.mode must be "fixed" or "adaptive" (got ${JSON.stringify(input.mode)})`);
}

/**
 * The CLI's `--revisit` value: `6h` (fixed) or `adaptive:MIN..MAX` with an optional start, `adaptive:10m..7d@1h`.
 */
export function parseRevisitFlag(value: string, minIntervalSeconds: number, field = '--revisit'): RevisitPolicy {
  const adaptive = /^adaptive:([^.@]+)\.\.([^@]+)(?:@(.+))?$/i.exec(value.trim());
  if (adaptive) {
    return checkRevisitPolicy(
      {
        mode: 'adaptive',
        minSeconds: parseDurationSeconds(adaptive[1]!, field),
        maxSeconds: parseDurationSeconds(adaptive[2]!, field),
        intervalSeconds: adaptive[3] === undefined ? undefined : parseDurationSeconds(adaptive[3], field),
      },
      minIntervalSeconds,
      field,
    );
  }
  if (/^adaptive/i.test(value.trim())) throw new ScheduleInputError(field, `${field} adaptive takes a range: adaptive:MIN..MAX[@START], e.g. adaptive:10m..7d (got ${JSON.stringify(value)})`);
  return checkRevisitPolicy({ mode: 'fixed', intervalSeconds: parseDurationSeconds(value, field) }, minIntervalSeconds, field);
}

/** The next interval an adaptive policy picks after a visit (what the migration's trigger computes). */
export function nextAdaptiveInterval(policy: Extract<RevisitPolicy, { mode: 'adaptive' }>, changed: boolean | null): number {
  let next = policy.intervalSeconds;
  if (changed === true) next *= 1 - ADAPTIVE_REVISIT.decRate;
  else if (changed === false) next *= 1 + ADAPTIVE_REVISIT.incRate;
  return Math.min(policy.maxSeconds, Math.max(policy.minSeconds, next));
}
