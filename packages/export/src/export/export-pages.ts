import { currentExportCursor, iterateContent, iterateVisits, type ContentExportFilter, type ExportedPage, type ExportedVisit, type PrismaClient } from '@crawler/db';
import { jsonlLine } from './jsonl.js';
import { pageRecords, revisitRecords, warcinfoRecord, type WarcInfo } from './warc.js';

/** The export formats: JSON Lines, or WARC 1.1 with a gzip member per record. */
export const EXPORT_FORMATS = ['jsonl', 'warc'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Options for {@link exportPages}. */
export interface ExportOptions extends ContentExportFilter {
  format: ExportFormat;
  /** Called after each page is handed out (progress bars); in WARC, after each visit (a revisit has no page). */
  onPage?: (page: ExportedPage | null) => void;
  /** JSONL: every stored version of each page, not only the latest. @defaultValue false */
  allVersions?: boolean;
  /** The warcinfo record's fields (WARC only). */
  warcInfo?: WarcInfo;
  /** Keyset step, see iterateContent. */
  pageSize?: number;
}

/** The media type of an export. */
export function exportContentType(format: ExportFormat): string {
  return format === 'warc' ? 'application/warc' : 'application/x-ndjson; charset=utf-8';
}

/**
 * What an export holds. JSONL: the latest version of each page (every version with `allVersions`); with `since`, the
 * pages whose latest version is newer than it. WARC: every visit (with `since`, every visit since then), in the order
 * they happened: a `response` for each new version, a `revisit` for each visit that found the page unchanged.
 *
 * An export holds what was committed when it started (`upTo`, taken then when not given), and with `after` only what
 * was committed since the export that handed out that cursor: exports chained by their cursors hold every stored row
 * once. A WARC export names both in its warcinfo record (`crawler-filter-after`, `crawler-cursor`).
 *
 * The export as a stream of chunks, one page at a time (pipe it through stream.Readable.from: back-pressure holds
 * the database reads, so memory stays flat whatever the number of pages).
 */
export async function* exportPages(prisma: PrismaClient, options: ExportOptions): AsyncGenerator<Buffer> {
  const upTo = options.upTo ?? (await currentExportCursor(prisma));
  const filter: ContentExportFilter = { since: options.since, linkStatus: options.linkStatus, domain: options.domain, after: options.after, upTo };
  if (options.format === 'warc') {
    const fields: Record<string, string> = { ...options.warcInfo?.fields };
    fields['crawler-cursor'] = upTo;
    if (filter.after) fields['crawler-filter-after'] = filter.after;
    if (filter.since) fields['crawler-filter-since'] = filter.since.toISOString();
    if (filter.linkStatus) fields['crawler-filter-status'] = filter.linkStatus;
    if (filter.domain) fields['crawler-filter-domain'] = filter.domain;
    yield warcinfoRecord({ ...options.warcInfo, fields });
  }
  if (options.format === 'warc') {
    for await (const visit of iterateVisits(prisma, { ...filter, pageSize: options.pageSize })) {
      yield visitRecords(visit);
      options.onPage?.(visit.kind === 'new' ? visit.page : null);
    }
    return;
  }
  for await (const page of iterateContent(prisma, { ...filter, latestOnly: !options.allVersions, pageSize: options.pageSize })) {
    yield Buffer.from(jsonlLine(page), 'utf8');
    options.onPage?.(page);
  }
}

function visitRecords(visit: ExportedVisit): Buffer {
  return visit.kind === 'new' ? pageRecords(visit.page) : revisitRecords(visit.revisit);
}
