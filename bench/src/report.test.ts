import { describe, expect, it } from 'vitest';
import { checksumMismatches, cpuEfficiencyRatio, figuresOf, formatScaleTable, formatSizeTable, ratiosWithin, throughputRatio, type CrawlRow } from './report.js';
import type { CrawlerName } from './reference-result.js';

function row(label: string, size: number, elapsedMs: number, pageRequests: number, links = 10 * size): CrawlRow {
  return {
    label,
    size,
    runSize: size,
    concurrency: 4,
    latencyMs: 0,
    measurement: { name: label.split(' ')[0] as CrawlerName, okPages: size, failedPages: 0, links, textChars: 100 * size, elapsedMs, cpuMs: 2 * size, peakRssBytes: 64 * 1024 * 1024 },
    server: { totalRequests: pageRequests, pageRequests, distinctPages: size, maxRequestsPerPage: 1, robotsRequests: 0, otherRequests: 0, byMethod: { GET: pageRequests } },
    serverCpuMs: size,
  };
}

describe('report figures', () => {
  it('derives pages/s, requests per page, CPU per page and memory', () => {
    const f = figuresOf(row('undici', 100, 2_000, 150));
    expect(f.pagesPerSec).toBe(50);
    expect(f.requestsPerPage).toBe(1.5);
    expect(f.cpuMsPerPage).toBe(2);
    expect(f.peakRssMb).toBe(64);
  });

  it('gives throughput ratios against a reference of the same run', () => {
    const limit = row('undici', 100, 1_000, 100);
    const ours = row('ours', 100, 1_250, 100);
    expect(throughputRatio(ours, limit)).toBeCloseTo(0.8, 10);
    expect(throughputRatio(ours, undefined)).toBeNull();
  });

  it('compares CPU per page against the peer and takes ratios only within the rows given', () => {
    const peer = row('crawlee', 100, 1_000, 100);
    const cheap = { ...row('ours', 100, 1_000, 100), measurement: { ...row('ours', 100, 1_000, 100).measurement, cpuMs: 100 } };
    expect(cpuEfficiencyRatio(cheap, peer)).toBe(2);
    const ratios = ratiosWithin([row('undici', 100, 500, 100), peer, cheap]);
    expect(ratios.get(cheap)).toEqual({ vsLimit: 0.5, vsPeer: 1, cpuVsPeer: 2 });
    expect(ratiosWithin([cheap]).get(cheap)).toEqual({ vsLimit: null, vsPeer: null, cpuVsPeer: null });
  });

  it('prints ratio columns and a size-by-crawler scale table', () => {
    const rows = [row('undici', 100, 1_000, 100), row('crawlee', 100, 2_000, 100), row('undici', 1000, 5_000, 1000)];
    const table = formatSizeTable(rows.slice(0, 2));
    expect(table).toMatch(/\| crawlee +\| 100 +\| 100 +\| 0 +\| 50 +\| 0\.50 +\| 1\.00 /);
    const scale = formatScaleTable(rows);
    expect(scale.split('\n')[0]).toMatch(/\| pages\/s +\| 100 +\| 1000 +\|/);
    expect(scale).toMatch(/\| crawlee +\| 50 +\| – +\|/);
  });

  it('flags crawls that parsed different content from the limit', () => {
    expect(checksumMismatches([row('undici', 100, 1_000, 100), row('crawlee', 100, 1_000, 100)])).toEqual([]);
    const bad = checksumMismatches([row('undici', 100, 1_000, 100), row('bullmq', 100, 1_000, 100, 999)]);
    expect(bad).toHaveLength(1);
    expect(bad[0]).toContain('bullmq');
  });
});
