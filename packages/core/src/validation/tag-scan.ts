/**
 * Markers over a tag's attributes (`<script ... src=...`) without a regex's backtracking. `<script[^>]{1,500}src=`
 * tries up to 500 positions after every "<script": over 2 MiB of unclosed "<script" that is seconds per page, per
 * marker. A tag scan finds the same matches touching each character a bounded number of times.
 */

/** What the signatures match with: a RegExp, or a pattern that matches the same strings another way. */
export interface TextPattern {
  /** A regex source that matches exactly the same strings (documentation, and the tests' reference). */
  readonly source: string;
  /** Always false: a stateful pattern would skip matches on the next page. */
  readonly global: boolean;
  readonly sticky: boolean;
  test(text: string): boolean;
}

/** `<tag` followed by `min`..`max` characters other than `>`, then `pattern` (see {@link tagAttributes}). */
export interface TagAttributePattern extends TextPattern {
  readonly tag: string;
  readonly min: number;
  readonly max: number;
  /** The literal every match of `pattern` starts with. */
  readonly lead: string;
  /** `pattern`, sticky: run once at each candidate position. */
  readonly rest: RegExp;
}

/** Work one scan did, for tests: `<tag` occurrences visited and runs of the pattern after them. */
export interface TagScanCounts {
  tags: number;
  runs: number;
}

/**
 * The pattern `<tag[^>]{min,max}` + `pattern` as a linear scan. `lead` is a literal every match of `pattern` starts
 * with (`src=` for `src=["']...`); a `\b` before it is checked as in the regex.
 */
export function tagAttributes(tag: string, min: number, max: number, pattern: RegExp, lead: string): TagAttributePattern {
  if (pattern.global || pattern.sticky) throw new Error(`tagAttributes: ${pattern} must not be /g or /y`);
  const rest = new RegExp(pattern.source, `${pattern.flags}y`);
  const p: TagAttributePattern = {
    tag, min, max, lead, rest,
    source: `<${tag}[^>]{${min},${max}}${pattern.source}`,
    global: false,
    sticky: false,
    test: (text) => scanTagAttributes(p, text),
  };
  return p;
}

/**
 * Whether `text` has a match of `p`. The candidates for the attribute run's end are the occurrences of the lead
 * within reach of a `<tag` (before its `>` and within `max`); each is tried once, since the tags' reaches only move
 * forward and a failed try fails for every tag. Each cursor (`<tag`, `>`, lead) only moves forward.
 */
export function scanTagAttributes(p: TagAttributePattern, text: string, counts?: TagScanCounts): boolean {
  const open = `<${p.tag}`;
  let gt = -1; // the first '>' at or after the current tag's attributes (text.length when none)
  let lead = -1; // the first lead at or after the last position asked for
  let tried = -1; // the last lead position the pattern failed at
  for (let i = text.indexOf(open); i !== -1; i = text.indexOf(open, i + 1)) {
    if (counts) counts.tags++;
    const from = i + open.length;
    if (gt < from) {
      gt = text.indexOf('>', from);
      if (gt === -1) gt = text.length;
    }
    const last = Math.min(gt, from + p.max);
    for (let at = Math.max(from + p.min, tried + 1); at <= last; at = lead + 1) {
      // Still the first at or after `at` when it is not before it.
      if (lead < at) {
        lead = text.indexOf(p.lead, at);
        if (lead === -1) return false;
      }
      if (lead > last) break;
      if (counts) counts.runs++;
      p.rest.lastIndex = lead;
      if (p.rest.test(text)) return true;
      tried = lead;
    }
  }
  return false;
}

/** A pattern that matches where any of `parts` does (an alternation whose branches need different scans). */
export interface AnyPattern extends TextPattern {
  readonly parts: readonly TextPattern[];
}

/** Any of `parts`, tried in order. */
export function anyOf(...parts: TextPattern[]): AnyPattern {
  return {
    parts,
    source: parts.map((q) => q.source).join('|'),
    global: false,
    sticky: false,
    test: (text) => parts.some((q) => q.test(text)),
  };
}
