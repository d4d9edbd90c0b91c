/**
 * Runs of path segments repeated this many times in a row make a path a trap: a page that links `a/` under itself on
 * a server that answers any path (`/deep/a/a/a/…`), or a relative link written one level off (`/x/y/x/y/x/y/`). Two
 * in a row are real (`/tag/news/news`, `/2024/05/05`); Heritrix refuses three, and so do we.
 */
export const MAX_SEGMENT_REPEATS = 2;

/** Longest run of segments looked for: `/a/b/c/a/b/c/a/b/c` is a trap, a longer period is left to maxDepth. */
const MAX_RUN = 3;

/**
 * Whether the path of `url` (canonical, absolute) repeats a run of 1 to 3 segments more than
 * {@link MAX_SEGMENT_REPEATS} times in a row: the mark of a link that only goes deeper into the same page.
 */
export function isRepeatingPath(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start === -1) return false;
  const end = url.slice(start).search(/[?#]/);
  const segments = (end === -1 ? url.slice(start) : url.slice(start, start + end)).split('/').filter((s) => s !== '');
  const times = MAX_SEGMENT_REPEATS + 1;
  for (let run = 1; run <= MAX_RUN; run += 1) {
    for (let i = 0; i + run * times <= segments.length; i += 1) {
      let repeats = 1;
      while (repeats < times && sameRun(segments, i, i + run * repeats, run)) repeats += 1;
      if (repeats === times) return true;
    }
  }
  return false;
}

function sameRun(segments: string[], a: number, b: number, run: number): boolean {
  for (let k = 0; k < run; k += 1) if (segments[a + k] !== segments[b + k]) return false;
  return true;
}
