/** The long options a command's usage lines name (`--follow`, `--max-depth`), in order, each once. */
export function optionsOfUsage(usage: string): string[] {
  return [...new Set(usage.match(/--[a-z][a-z0-9-]*[a-z0-9]/gi) ?? [])];
}

/**
 * The option `typed` was most likely meant to be: the closest of `options` by edit distance (a swap of two neighbouring
 * letters counts as one edit), when it is within a third of the name's length (at least 1). Null when none is that
 * close: a suggestion far from what was typed is noise.
 */
export function suggestOption(typed: string, options: readonly string[]): string | null {
  const name = typed.replace(/^-+/, '').split('=')[0]!;
  if (name.length < 2) return null;
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const option of options) {
    const d = editDistance(name, option.replace(/^-+/, ''));
    if (d < bestDistance) {
      best = option;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * A usage error's message with "did you mean" for Node's `Unknown option '--folow'` (parseArgs), the option taken from
 * the command's own usage lines; any other message as it is. The rest of the message (the usage) is kept.
 */
export function withOptionSuggestion(message: string, usage: string): string {
  // Node's own sentence only (with its hint for a positional that starts with '-'): what follows is the command's.
  const m = /^Unknown option '(-[^']*)'(?:\. To specify a positional argument[^\n]*?as in '-- "[^"\n]*")?/.exec(message);
  if (!m) return message;
  const suggestion = suggestOption(m[1]!, optionsOfUsage(usage));
  return suggestion ? `unknown option '${m[1]}': did you mean ${suggestion}?${message.slice(m[0].length)}` : message;
}
