/** A stored, scheduled link as the sitemap re-read sees it. */
export interface ScheduledVisit {
  linkId: string;
  url: string;
  /** When its latest visit was made; null: never visited. */
  lastAttemptAt: Date | null;
  /** When its schedule has it due next; null: no schedule (no revisit policy, or a visit under way). */
  nextFetchAt: Date | null;
}

/**
 * Which scheduled links a sitemap says changed since their last visit, to be revisited now instead of at their due
 * time: a `<lastmod>` later than the link's last visit. A lastmod at or before it says unchanged: the link keeps its
 * schedule, so a sitemap never makes the crawler come back sooner for a page it has already seen at that date. A
 * lastmod later than `nowMs` (a generator's wrong clock, or one that stamps every entry "now" plus skew) proves
 * nothing yet and is ignored until it is past. Links without a schedule, or already due, are left to the scheduler.
 * At most `maxLinks`, the longest-unvisited first, so a sitemap that marks everything changed costs one bounded batch
 * per re-read. Pure.
 */
export function linksChangedPerSitemap(lastModified: ReadonlyMap<string, number>, stored: readonly ScheduledVisit[], opts: { nowMs: number; maxLinks: number }): string[] {
  const pulled: ScheduledVisit[] = [];
  for (const v of stored) {
    const lastmod = lastModified.get(v.url);
    if (lastmod === undefined || v.lastAttemptAt === null || v.nextFetchAt === null) continue;
    if (v.nextFetchAt.getTime() <= opts.nowMs || lastmod > opts.nowMs) continue;
    if (lastmod > v.lastAttemptAt.getTime()) pulled.push(v);
  }
  pulled.sort((a, b) => a.lastAttemptAt!.getTime() - b.lastAttemptAt!.getTime());
  return pulled.slice(0, Math.max(0, opts.maxLinks)).map((v) => v.linkId);
}
