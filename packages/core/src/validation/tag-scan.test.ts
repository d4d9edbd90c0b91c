import { describe, expect, it } from 'vitest';
import { anyOf, scanTagAttributes, tagAttributes, type TagScanCounts } from './tag-scan.js';

const MiB = 1 << 20;
const repeat = (unit: string, chars: number) => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);

describe('tagAttributes', () => {
  it('matches exactly what its regex source matches', () => {
    // Small bounds, so runs shorter and longer than the bound, tags closed early and late, all come up.
    const cases = [
      { p: tagAttributes('script', 1, 6, /src=["'][^"']{0,4}_inc/, 'src='), tokens: ['<script', '<scripts', ' ', 'x', '>', '"', "'", 'src=', '_inc'] },
      { p: tagAttributes('script', 0, 5, /\bid=["']?anu\b/, 'id='), tokens: ['<script', ' ', 'x', '>', '"', 'id=', 'aid=', 'anu', 'anux'] },
      { p: tagAttributes('body', 0, 4, />\s*<([a-z][a-z0-9]*-[a-z0-9-]*)[\s/>]/, '>'), tokens: ['<body', ' ', 'x', '>', '<', 'a-b', '<x-y>', '\n'] },
      { p: tagAttributes('meta', 1, 3, /equiv=["']?refresh/, 'equiv='), tokens: ['<meta', ' ', 'x', '>', "'", 'equiv=', 'refresh'] },
    ];
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) >>> 8;
    const differ: string[][] = [];
    const matched = cases.map(() => 0);
    cases.forEach(({ p, tokens }, k) => {
      const reference = new RegExp(p.source);
      for (let n = 0; n < 20_000; n++) {
        const text = Array.from({ length: 1 + (next() % 12) }, () => tokens[next() % tokens.length]).join('');
        const want = reference.test(text);
        if (p.test(text) !== want) differ.push([p.source, text]);
        if (want) matched[k]!++;
      }
    });
    expect(differ).toEqual([]);
    expect(matched.map((m) => (m > 20 ? true : m))).toEqual(cases.map(() => true));
  });

  it('runs its pattern at most once per occurrence of the lead, however many tags overlap it', () => {
    // 2 MiB of unclosed "<script": the regex `<script[^>]{1,500}src=` tried ~500 positions after each one.
    const imperva = tagAttributes('script', 1, 500, /src=["'][^"']{0,300}_incapsula_resource/, 'src=');
    const counts: TagScanCounts = { tags: 0, runs: 0 };
    expect(scanTagAttributes(imperva, repeat('<script', 2 * MiB), counts)).toBe(false);
    expect(counts.runs).toBe(0);
    expect(counts.tags).toBeLessThanOrEqual(Math.ceil((2 * MiB) / 7));
    // With a lead after every tag but no match, the pattern runs once per lead, not once per position in reach.
    const leads = `${repeat('<script', MiB)}src=x`;
    const c1: TagScanCounts = { tags: 0, runs: 0 };
    expect(scanTagAttributes(imperva, leads, c1)).toBe(false);
    expect(c1.runs).toBe(1);
    // Every tag sees the next 70 "src=": each is still tried once.
    const dense = repeat('<script src=', 2 * MiB);
    const c2: TagScanCounts = { tags: 0, runs: 0 };
    expect(scanTagAttributes(imperva, dense, c2)).toBe(false);
    expect(c2.runs).toBeLessThanOrEqual(dense.split('src=').length - 1);
    expect(imperva.test(`${dense}<script src="/_incapsula_resource?x">`)).toBe(true);
  });

  it('anyOf matches when one of its patterns does, and keeps them as data', () => {
    const p = anyOf(/elm\.main\.init\(/, tagAttributes('script', 1, 500, /src=["'][^"']{0,300}\belm(\.min)?\.js/, 'src='));
    expect(p.test('<script src="/elm.min.js">')).toBe(true);
    expect(p.test('elm.main.init(')).toBe(true);
    expect(p.test('<script>elm.js')).toBe(false);
    expect(p.parts).toHaveLength(2);
    expect(p.global || p.sticky).toBe(false);
  });
});
