import { describe, expect, it } from 'vitest';
import { linksChangedPerSitemap, type ScheduledVisit } from './sitemap-freshness.js';

const NOW = Date.parse('2026-11-28T12:00:00Z');
const at = (iso: string) => new Date(iso);
const visit = (id: string, last: string | null, next: string | null = '2026-11-29T12:00:00Z'): ScheduledVisit => ({
  linkId: id, url: `https://a.test/${id}`, lastAttemptAt: last === null ? null : at(last), nextFetchAt: next === null ? null : at(next),
});
const lastmods = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([id, iso]) => [`https://a.test/${id}`, Date.parse(iso)]));

describe('linksChangedPerSitemap', () => {
  it('pulls forward a link whose lastmod is newer than its last visit, and lets an unchanged one wait', () => {
    const stored = [visit('changed', '2026-11-28T08:00:00Z'), visit('same', '2026-11-28T08:00:00Z'), visit('older', '2026-11-28T08:00:00Z'), visit('unlisted', '2026-11-28T08:00:00Z')];
    const lm = lastmods({ changed: '2026-11-28T10:00:00Z', same: '2026-11-28T08:00:00Z', older: '2026-11-01T00:00:00Z' });
    expect(linksChangedPerSitemap(lm, stored, { nowMs: NOW, maxLinks: 100 })).toEqual(['changed']);
  });

  it('ignores a lastmod in the future, links never visited, without a schedule, or already due', () => {
    const stored = [visit('future', '2026-11-28T08:00:00Z'), visit('never', null), visit('unscheduled', '2026-11-28T08:00:00Z', null), visit('due', '2026-11-28T08:00:00Z', '2026-11-28T11:00:00Z')];
    const lm = lastmods({ future: '2026-11-28T13:00:00Z', never: '2026-11-28T10:00:00Z', unscheduled: '2026-11-28T10:00:00Z', due: '2026-11-28T10:00:00Z' });
    expect(linksChangedPerSitemap(lm, stored, { nowMs: NOW, maxLinks: 100 })).toEqual([]);
  });

  it('takes at most maxLinks, the longest-unvisited first', () => {
    const stored = [visit('b', '2026-11-27T00:00:00Z'), visit('c', '2026-11-28T00:00:00Z'), visit('a', '2026-11-26T00:00:00Z')];
    const lm = lastmods({ a: '2026-11-28T10:00:00Z', b: '2026-11-28T10:00:00Z', c: '2026-11-28T10:00:00Z' });
    expect(linksChangedPerSitemap(lm, stored, { nowMs: NOW, maxLinks: 2 })).toEqual(['a', 'b']);
    expect(linksChangedPerSitemap(lm, stored, { nowMs: NOW, maxLinks: 0 })).toEqual([]);
  });
});
