import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LABELS, classifyCorpus, formatRows, labelTable, type Classified, type Label } from './__fixtures__/corpus-eval.js';

/**
 * The held-out corpus: pages written independently of the fixture corpus the detectors were tuned on, by someone
 * who had not read those fixtures, imitating real pages (manifest.json names the pattern each imitates). It is the
 * generalisation check: fixes must come from general signals (structure, vendor endpoints, status and size), never
 * from wording found only here. Labels: what the crawler should conclude (a 403/429 or a bot wall is 'challenge';
 * HTML that needs script to show content is 'spa'; HTML without content is 'empty'; content, including non-HTML
 * such as JSON, is 'static').
 */
const { manifest, results } = classifyCorpus(join(dirname(fileURLToPath(import.meta.url)), '__holdout__'));
const table = (of: readonly Classified[] = results) => labelTable(of);

const recallOf = (label: Label): number => table().find((r) => r.label === label)?.recall ?? 0;

describe('held-out corpus', () => {
  it('has at least 80 labelled pages covering every label', () => {
    expect(manifest.length).toBeGreaterThanOrEqual(80);
    for (const l of LABELS) expect(manifest.some((e) => e.label === l)).toBe(true);
  });

  it('reports precision and recall per label, and what it got wrong', () => {
    const rows = table();
    const rounds = [...new Set(manifest.map((e) => e.round ?? 1))].filter((n) => n > 1).sort((a, b) => a - b);
    const lines = [
      ...formatRows(rows),
      ...rounds.flatMap((n) => [`round ${n} only (written after round ${n - 1}'s fixes):`, ...formatRows(table(results.filter((r) => (r.e.round ?? 1) === n)))]),
    ];
    const misses = results.filter((r) => r.predicted !== r.e.label).map((r) => `  ${r.e.file}: ${r.e.label} → ${r.predicted} (text ${r.v.visibleTextLength})`);
    const vendorMisses = results
      .filter((r) => r.e.label === 'challenge' && r.predicted === 'challenge' && r.e.vendor && r.v.blockVendor !== r.e.vendor)
      .map((r) => `  ${r.e.file}: vendor ${r.v.blockVendor} (expected ${r.e.vendor})`);
    console.log(
      [
        'held-out corpus:',
        ...lines,
        ...(misses.length ? ['misclassified:', ...misses] : []),
        ...(vendorMisses.length ? ['vendor not named (informational):', ...vendorMisses] : []),
      ].join('\n'),
    );
    expect(rows.every((r) => r.n > 0)).toBe(true);
  });

  it('never calls a static page a challenge', () => {
    const wrong = results.filter((r) => r.e.label === 'static' && r.predicted === 'challenge').map((r) => r.e.file);
    expect(wrong).toEqual([]);
  });

  it('recalls at least 95% of challenges', () => {
    expect(recallOf('challenge')).toBeGreaterThanOrEqual(0.95);
  });

  it('recalls at least 95% of SPA shells', () => {
    expect(recallOf('spa')).toBeGreaterThanOrEqual(0.95);
  });
});
