import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { classifyCorpus } from './__fixtures__/corpus-eval.js';

/** Static pages that talk about, embed or quote bot walls (see __mentions__/README.md): never a challenge. */
const { manifest, results } = classifyCorpus(join(dirname(fileURLToPath(import.meta.url)), '__mentions__'));

describe('held-out static pages that mention bot walls', () => {
  it('has pages to check', () => {
    expect(manifest.length).toBeGreaterThanOrEqual(20);
  });

  it('calls none of them a challenge, and reads them as static content', () => {
    const called = results.filter((r) => r.predicted === 'challenge').map((r) => `${r.e.file} (${r.v.blockVendor})`);
    expect(called).toEqual([]);
    expect(results.filter((r) => r.predicted !== 'static').map((r) => `${r.e.file} → ${r.predicted}`)).toEqual([]);
  });
});
