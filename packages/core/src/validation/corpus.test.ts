import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LABELS, classifyCorpus, formatRows, labelTable } from './__fixtures__/corpus-eval.js';

/**
 * The labelled fixture corpus: pages written by us that imitate the structure and markers of real static pages,
 * SPA shells, bot walls and empty responses (manifest.json says which pattern each imitates). It measures the
 * detectors, it does not define them: signatures rely on structural markers, not on fixture wording.
 */
const { manifest, results } = classifyCorpus(join(dirname(fileURLToPath(import.meta.url)), '__fixtures__'));
const table = () => labelTable(results);

describe('fixture corpus', () => {
  it('has at least 100 labelled pages covering every label', () => {
    expect(manifest.length).toBeGreaterThanOrEqual(100);
    for (const l of LABELS) expect(manifest.some((e) => e.label === l)).toBe(true);
  });

  it('reports precision and recall per label', () => {
    const rows = table();
    const lines = formatRows(rows);
    const misses = results.filter((r) => r.predicted !== r.e.label).map((r) => `  ${r.e.file}: ${r.e.label} → ${r.predicted} ${JSON.stringify(r.scores.slice(0, 2))}`);
    console.log(['validation corpus:', ...lines, ...(misses.length ? ['misclassified:', ...misses] : [])].join('\n'));
    expect(rows.every((r) => r.n > 0)).toBe(true);
  });

  it('recognises every challenge family, by vendor (figures per family)', () => {
    const families = new Map<string, { n: number; recognised: number; named: number; statuses: Set<number> }>();
    for (const r of results.filter((x) => x.e.label === 'challenge')) {
      const f = families.get(r.e.vendor ?? 'generic') ?? { n: 0, recognised: 0, named: 0, statuses: new Set<number>() };
      f.n++;
      f.statuses.add(r.e.status);
      if (r.predicted === 'challenge') f.recognised++;
      if (r.predicted === 'challenge' && (r.e.vendor === undefined || r.v.blockVendor === r.e.vendor)) f.named++;
      families.set(r.e.vendor ?? 'generic', f);
    }
    const rows = [...families].sort(([a], [b]) => a.localeCompare(b));
    console.log(['challenge families (fixtures): family n recognised named statuses', ...rows.map(([v, f]) => `  ${v.padEnd(20)} ${f.n} ${f.recognised} ${f.named} ${[...f.statuses].sort().join('/')}`)].join('\n'));
    expect(rows.filter(([, f]) => f.recognised < f.n).map(([v]) => v)).toEqual([]);
  });

  it('keeps SPA shells carrying real-user-monitoring snippets out of the challenge class', () => {
    const rum = results.filter((r) => r.e.file.startsWith('spa-shell-rum-'));
    expect(rum.length).toBeGreaterThanOrEqual(5);
    expect(rum.filter((r) => r.predicted !== 'spa').map((r) => `${r.e.file} → ${r.predicted} (${r.v.blockVendor})`)).toEqual([]);
  });

  it('never calls a static page a challenge', () => {
    const wrong = results.filter((r) => r.e.label === 'static' && r.predicted === 'challenge').map((r) => r.e.file);
    expect(wrong).toEqual([]);
  });

  it('recalls at least 95% of challenges and of SPA shells', () => {
    const rows = table();
    expect(rows.find((r) => r.label === 'challenge')?.recall).toBeGreaterThanOrEqual(0.95);
    expect(rows.find((r) => r.label === 'spa')?.recall).toBeGreaterThanOrEqual(0.95);
  });

  it('names the vendor of recognised challenges', () => {
    const named = results.filter((r) => r.e.label === 'challenge' && r.predicted === 'challenge' && r.e.vendor);
    const wrong = named.filter((r) => r.v.blockVendor !== r.e.vendor).map((r) => `${r.e.file}: ${r.v.blockVendor} ≠ ${r.e.vendor}`);
    expect(wrong).toEqual([]);
  });

  it('tells the challenges that clear by themselves from refusals and the ones that need a person (kind per family)', () => {
    const challenges = results.filter((r) => r.e.label === 'challenge');
    // Every challenge fixture says what it waits for, so a new family cannot go untested.
    expect(challenges.filter((r) => r.e.kind === undefined).map((r) => r.e.file)).toEqual([]);
    const wrong = challenges.filter((r) => r.kind !== r.e.kind).map((r) => `${r.e.file}: ${r.kind} ≠ ${r.e.kind}`);
    expect(wrong).toEqual([]);
    // Each kind has fixtures of its own.
    for (const kind of ['interstitial', 'refusal', 'captcha', 'waiting_room']) expect(challenges.some((r) => r.e.kind === kind)).toBe(true);
  });

  it('gives challenge pages with a status of their own the captcha block type', () => {
    const wrong = results
      .filter((r) => r.e.label === 'challenge' && r.predicted === 'challenge' && r.v.blockType !== 'blocked_captcha')
      .map((r) => r.e.file);
    expect(wrong).toEqual([]);
  });
});
