import { SPA_MAX_VISIBLE_CHARS } from '@crawler/core';
import type { LinkSummary } from '@crawler/db';

/** One link as the `crawl` summary reports it. */
export interface LinkReport {
  url: string;
  status: string;
  fetcher: string | null;
  selectionSource: string | null;
  attemptCount: number;
  errorType: string | null;
  /** The link's last error in words (`max_attempts:network_error: …`); null when done. */
  error: string | null;
  pausedUntil: string | null;
}

/** The `crawl --json` document: every link, the rejected inputs, and totals. */
export interface CrawlReport {
  links: LinkReport[];
  rejected: Array<{ input: string; code: string; message: string }>;
  totals: { links: number; done: number; failed: number; paused: number; other: number; rejected: number; attempts: number; bySource: Record<string, number> };
}

/** The link fields the report reads: @crawler/db LinkStore's summary rows. */
export type LinkRow = LinkSummary;

/** Build the report from link rows, in the order given. */
export function buildCrawlReport(rows: readonly LinkRow[], rejected: CrawlReport['rejected']): CrawlReport {
  const links = rows.map((r) => ({
    url: r.url,
    status: r.status,
    fetcher: r.fetcher,
    selectionSource: r.selectionSource,
    attemptCount: r.attemptCount,
    errorType: r.status === 'done' ? null : r.lastErrorType,
    error: r.status === 'done' ? null : r.lastError,
    pausedUntil: r.status === 'paused' && r.pausedUntil ? r.pausedUntil.toISOString() : null,
  }));
  const count = (s: string) => links.filter((l) => l.status === s).length;
  const bySource: Record<string, number> = {};
  for (const l of links) if (l.selectionSource) bySource[l.selectionSource] = (bySource[l.selectionSource] ?? 0) + 1;
  const done = count('done');
  const failed = count('failed');
  const paused = count('paused');
  return {
    links,
    rejected,
    totals: {
      links: links.length, done, failed, paused, other: links.length - done - failed - paused, rejected: rejected.length,
      attempts: links.reduce((n, l) => n + l.attemptCount, 0), bySource,
    },
  };
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A plain-text summary for a terminal: one line per link, then totals. */
export function formatCrawlReport(report: CrawlReport): string {
  const lines = report.links.map((l) => {
    const how = l.fetcher ? `${l.fetcher} (${l.selectionSource ?? '?'})` : '-';
    const why = l.error ? clip(l.error, 200) : l.errorType;
    const extra = l.status === 'paused' ? ` until ${l.pausedUntil}${why ? ` (${why})` : ''}` : why ? ` ${why}` : '';
    return `${l.status.padEnd(7)} ${how.padEnd(34)} ${String(l.attemptCount).padStart(2)} att  ${l.url}${extra}`;
  });
  for (const r of report.rejected) lines.push(`rejected ${r.input}: ${r.message}`);
  const t = report.totals;
  const sources = Object.entries(t.bySource).map(([k, v]) => `${k} ${v}`).join(', ');
  lines.push(`\n${t.links} links: ${t.done} done, ${t.failed} failed, ${t.paused} paused${t.other ? `, ${t.other} other` : ''}; ${t.rejected} rejected; ${t.attempts} attempts${sources ? `; decisions: ${sources}` : ''}`);
  // The stored error does not name the setting (an API caller is told only that the target is not public); whoever
  // runs the crawl on a test site needs to know what lets it through.
  const refused = report.links.filter((l) => l.errorType === 'blocked_address').length;
  if (refused > 0) {
    lines.push(`${refused === 1 ? '1 link was' : `${refused} links were`} refused because ${refused === 1 ? 'its address is' : 'their addresses are'} not public (loopback, private, link-local): to crawl such hosts, name them in FETCH_ALLOW_HOSTS (e.g. FETCH_ALLOW_HOSTS=127.0.0.0/8 for a local test site)`);
  }
  // A newcomer's hello-world page is the usual case: say what the code means and that it is not a crawler fault.
  const empty = report.links.filter((l) => l.status === 'failed' && l.errorType === 'empty_content').length;
  if (empty > 0) {
    lines.push(`${empty === 1 ? '1 link' : `${empty} links`} failed empty_content: fewer than ${SPA_MAX_VISIBLE_CHARS} visible characters of text, even in a browser; a page this short is taken for one that did not render, and is not stored`);
  }
  return `${lines.join('\n')}\n`;
}
