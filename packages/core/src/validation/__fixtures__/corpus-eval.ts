/**
 * Shared by the labelled corpus tests (the tuning fixtures and the held-out pages): load a manifest, classify every
 * page with validateResponseDetailed, and compute precision and recall per label.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChallengeKind } from '../challenge-signatures.js';
import type { ValidationResult } from '../types.js';
import { validateResponseDetailed } from '../validate-response.js';

export type Label = 'static' | 'spa' | 'challenge' | 'empty';
export const LABELS: Label[] = ['static', 'spa', 'challenge', 'empty'];

export interface Entry {
  file: string;
  label: Label;
  imitates: string;
  status: number;
  headers: Record<string, string>;
  vendor?: string;
  framework?: string;
  /** For a challenge: what it waits for (whether a browser should wait on it). */
  kind?: ChallengeKind;
  /** 2, 3…: pages written after the previous round's fixes, to test those fixes on pages they were not made for. */
  round?: number;
}

export interface Classified {
  e: Entry;
  v: ValidationResult;
  predicted: Label;
  /** Per-vendor challenge evidence, strongest first. */
  scores: unknown[];
  /** The detector's kind of challenge (null when it saw none). */
  kind: ChallengeKind | null;
}

export interface Row {
  label: Label;
  n: number;
  tp: number;
  precision: number;
  recall: number;
}

/** What the crawler concludes from a validation result, as a corpus label. */
export function predictLabel(v: ValidationResult): Label {
  if (v.isBlocked) return 'challenge';
  if (v.hasSpa) return 'spa';
  if (v.isEmpty) return 'empty';
  return 'static';
}

/** Read `dir/manifest.json` and classify every page it lists. */
export function classifyCorpus(dir: string): { manifest: Entry[]; results: Classified[] } {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Entry[];
  const results = manifest.map((e) => {
    const { result, challenge } = validateResponseDetailed({ status: e.status, headers: e.headers, body: readFileSync(join(dir, e.file)) });
    return { e, v: result, predicted: predictLabel(result), scores: challenge.scores as unknown[], kind: challenge.kind };
  });
  return { manifest, results };
}

/** Precision and recall per label over `results`. */
export function labelTable(results: readonly Classified[]): Row[] {
  return LABELS.map((label) => {
    const tp = results.filter((r) => r.e.label === label && r.predicted === label).length;
    const predicted = results.filter((r) => r.predicted === label).length;
    const actual = results.filter((r) => r.e.label === label).length;
    return { label, n: actual, tp, precision: predicted ? tp / predicted : 1, recall: actual ? tp / actual : 1 };
  });
}

/** One line per label, for the test output. */
export function formatRows(rows: readonly Row[]): string[] {
  return rows.map((r) => `${r.label.padEnd(10)} n=${String(r.n).padStart(3)}  precision=${(r.precision * 100).toFixed(1)}%  recall=${(r.recall * 100).toFixed(1)}%`);
}
