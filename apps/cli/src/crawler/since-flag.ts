import { UsageError } from '../command.js';

/**
 * `--since`: an ISO time (`2026-11-23T10:00:00Z`) or a date (its UTC midnight), as `GET /export?since=` takes them.
 * A day the month does not have is refused: `new Date('2026-02-30')` is March 2, which would export from a day the
 * user never named.
 */
export function parseSinceFlag(value: string, usage: string): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:$|T)/.exec(value);
  const at = new Date(value);
  const calendarDay = m !== null && (() => {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const day = new Date(Date.UTC(y, mo - 1, d));
    return day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d;
  })();
  if (!calendarDay || Number.isNaN(at.getTime())) throw new UsageError(`--since must be an ISO time such as 2026-11-23T10:00:00Z, or a date such as 2026-11-23 (got ${JSON.stringify(value)}); ${usage}`);
  return at;
}
