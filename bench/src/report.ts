import type { CrawlMeasurement } from './reference-result.js';
import type { RequestStats } from './synthetic-web.js';

/** One crawl of one size, with what the synthetic web saw. */
export interface CrawlRow {
  /** Row label: the crawler name, or e.g. `ours (2nd crawl)`. */
  label: string;
  /** Pages this crawl was asked to fetch. */
  size: number;
  /** The size of the run the row belongs to (our second crawl may be smaller than its run). */
  runSize: number;
  concurrency: number;
  latencyMs: number;
  measurement: CrawlMeasurement;
  server: RequestStats;
  /** CPU the synthetic web spent serving this crawl, in milliseconds. */
  serverCpuMs: number;
  /**
   * Ratios fixed by the caller, e.g. medians of per-round ratios: with several rounds, a row's neighbours in the
   * table may come from other rounds, and a ratio across rounds mixes machine load into it.
   */
  ratios?: { vsLimit: number | null; vsPeer: number | null; cpuVsPeer: number | null };
}

/** Derived figures of a row. */
export interface RowFigures {
  pagesPerSec: number;
  /** Page requests at the server divided by pages asked for (1.00 = one request per page). */
  requestsPerPage: number;
  cpuMsPerPage: number;
  peakRssMb: number;
}

/** Pages per second, requests per page, CPU per page and peak memory of a row. */
export function figuresOf(row: CrawlRow): RowFigures {
  const m = row.measurement;
  return {
    pagesPerSec: m.okPages / (m.elapsedMs / 1000),
    requestsPerPage: row.server.pageRequests / row.size,
    cpuMsPerPage: m.cpuMs / Math.max(1, m.okPages),
    peakRssMb: m.peakRssBytes / (1024 * 1024),
  };
}

/** `a / b` of pages per second, or null when either is missing. */
export function throughputRatio(a: CrawlRow | undefined, b: CrawlRow | undefined): number | null {
  if (!a || !b) return null;
  const fb = figuresOf(b).pagesPerSec;
  return fb > 0 ? figuresOf(a).pagesPerSec / fb : null;
}

function fmt(n: number | null | undefined, digits = 2): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits);
}

/** A Markdown table of rows (works in a terminal and pastes into the README). */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** Peer's CPU per page over this row's: above 1 means this crawl spends less CPU per page than the peer. */
export function cpuEfficiencyRatio(a: CrawlRow | undefined, peer: CrawlRow | undefined): number | null {
  if (!a || !peer) return null;
  const fa = figuresOf(a).cpuMsPerPage;
  return fa > 0 ? figuresOf(peer).cpuMsPerPage / fa : null;
}

/** Ratios of every row against the limit (undici) and the peer (Crawlee) among `rows` (one round, one size). */
export function ratiosWithin(rows: CrawlRow[]): Map<CrawlRow, NonNullable<CrawlRow['ratios']>> {
  const limit = rows.find((r) => r.label === 'undici');
  const peer = rows.find((r) => r.label === 'crawlee');
  return new Map(rows.map((r) => [r, { vsLimit: throughputRatio(r, limit), vsPeer: throughputRatio(r, peer), cpuVsPeer: cpuEfficiencyRatio(r, peer) }]));
}

/**
 * The throughput table of one size: every crawl with its ratio to the limit (undici) and to the peer (Crawlee), and
 * the peer's CPU per page over its own (the figure that load from other processes disturbs least).
 */
export function formatSizeTable(rows: CrawlRow[]): string {
  const computed = ratiosWithin(rows);
  return formatTable(
    ['crawl', 'pages', 'ok', 'failed', 'pages/s', '× undici', '× crawlee', 'CPU eff. × crawlee', 'req/page', 'robots', 'CPU ms/page', 'server CPU ms/page', 'peak RSS MB'],
    rows.map((r) => {
      const f = figuresOf(r);
      const ratios = r.ratios ?? computed.get(r)!;
      return [
        r.label,
        String(r.size),
        String(r.measurement.okPages),
        String(r.measurement.failedPages),
        fmt(f.pagesPerSec, 0),
        fmt(ratios.vsLimit),
        fmt(ratios.vsPeer),
        fmt(ratios.cpuVsPeer),
        fmt(f.requestsPerPage),
        String(r.server.robotsRequests),
        fmt(f.cpuMsPerPage, 1),
        fmt(r.serverCpuMs / r.size, 1),
        fmt(f.peakRssMb, 0),
      ];
    }),
  );
}

/** How throughput grows with size: one row per crawl label, one column per size. */
export function formatScaleTable(rows: CrawlRow[]): string {
  const sizes = [...new Set(rows.map((r) => r.runSize))].sort((a, b) => a - b);
  const labels = [...new Set(rows.map((r) => r.label))];
  return formatTable(
    ['pages/s', ...sizes.map(String)],
    labels.map((label) => [
      label,
      ...sizes.map((s) => {
        const row = rows.find((r) => r.label === label && r.runSize === s);
        return row ? fmt(figuresOf(row).pagesPerSec, 0) : '–';
      }),
    ]),
  );
}

/** Whether every page was fetched and parsed identically: links and text totals must match the limit's. */
export function checksumMismatches(rows: CrawlRow[]): string[] {
  const out: string[] = [];
  for (const size of new Set(rows.map((r) => r.runSize))) {
    const ofSize = rows.filter((r) => r.runSize === size && r.measurement.links > 0);
    const ref = ofSize.find((r) => r.label === 'undici') ?? ofSize[0];
    if (!ref) continue;
    for (const r of ofSize) {
      if (r.measurement.links !== ref.measurement.links || r.measurement.textChars !== ref.measurement.textChars) {
        out.push(`${r.label} at ${size}: links ${r.measurement.links} vs ${ref.measurement.links}, text ${r.measurement.textChars} vs ${ref.measurement.textChars}`);
      }
    }
  }
  return out;
}
