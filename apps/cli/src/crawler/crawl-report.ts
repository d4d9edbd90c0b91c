import { sqlOf, type PrismaClient } from '@crawler/db';

/** One link as the `crawl` summary reports it. */
export interface LinkReport {
  url: string;
  status: string;
  fetcher: string | null;
  selectionSource: string | null;
  attemptCount: number;
  errorType: string | null;
  pausedUntil: string | null;
}

/** The `crawl --json` document: every link, the rejected inputs, and totals. */
export interface CrawlReport {
  links: LinkReport[];
  rejected: Array<{ input: string; code: string; message: string }>;
  totals: { links: number; done: number; failed: number; paused: number; other: number; rejected: number; attempts: number; bySource: Record<string, number> };
}

/** The link fields the report reads (a Prisma Link row fits). */
export interface LinkRow {
  url: string;
  status: string;
  fetcher: string | null;
  selectionSource: string | null;
  attemptCount: number;
  lastErrorType: string | null;
  pausedUntil: Date | null;
}

const ROWS_CHUNK = 10_000;

/**
 * The report's rows for `ids`, in that order (ids with no row left out). Plain SQL, in chunks: a crawl that used no
 * Prisma query until its report does not load Prisma's query compiler just to print it (~0.3 s of a short crawl).
 */
export async function readLinkRows(prisma: PrismaClient, ids: readonly string[]): Promise<LinkRow[]> {
  const byId = new Map<string, LinkRow>();
  for (let i = 0; i < ids.length; i += ROWS_CHUNK) {
    const rows = await sqlOf(prisma).query<LinkRow & { id: string }>(
      `SELECT id::text AS id, url, status, fetcher, selection_source AS "selectionSource", attempt_count AS "attemptCount",
              last_error_type AS "lastErrorType", paused_until AS "pausedUntil"
       FROM links WHERE id = ANY($1::uuid[])`,
      [ids.slice(i, i + ROWS_CHUNK)],
    );
    for (const r of rows) byId.set(r.id, r);
  }
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r ? [r] : [];
  });
}

/** How many of `ids` are settled for the progress bar (done, failed or paused). */
export async function countSettled(prisma: PrismaClient, ids: readonly string[]): Promise<number> {
  const [row] = await sqlOf(prisma).query<{ n: number }>(
    `SELECT count(*)::int AS n FROM links WHERE id = ANY($1::uuid[]) AND status IN ('done', 'failed', 'paused')`,
    [ids],
  );
  return row?.n ?? 0;
}

/** Build the report from link rows, in the order given. */
export function buildCrawlReport(rows: readonly LinkRow[], rejected: CrawlReport['rejected']): CrawlReport {
  const links = rows.map((r) => ({
    url: r.url,
    status: r.status,
    fetcher: r.fetcher,
    selectionSource: r.selectionSource,
    attemptCount: r.attemptCount,
    errorType: r.status === 'done' ? null : r.lastErrorType,
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

/** A plain-text summary for a terminal: one line per link, then totals. */
export function formatCrawlReport(report: CrawlReport): string {
  const lines = report.links.map((l) => {
    const how = l.fetcher ? `${l.fetcher} (${l.selectionSource ?? '?'})` : '-';
    const extra = l.status === 'paused' ? ` until ${l.pausedUntil}` : l.errorType ? ` ${l.errorType}` : '';
    return `${l.status.padEnd(7)} ${how.padEnd(34)} ${String(l.attemptCount).padStart(2)} att  ${l.url}${extra}`;
  });
  for (const r of report.rejected) lines.push(`rejected ${r.input}: ${r.message}`);
  const t = report.totals;
  const sources = Object.entries(t.bySource).map(([k, v]) => `${k} ${v}`).join(', ');
  lines.push(`\n${t.links} links: ${t.done} done, ${t.failed} failed, ${t.paused} paused${t.other ? `, ${t.other} other` : ''}; ${t.rejected} rejected; ${t.attempts} attempts${sources ? `; decisions: ${sources}` : ''}`);
  return `${lines.join('\n')}\n`;
}
