// Reads a soak CSV and prints, per numeric column: first, at 25/50/75 %, last, and the slope of the last half per 10 min.
// Usage: node summarize.mjs soak.csv [column-regex]
import { readFileSync } from 'node:fs';
const [file, filter] = process.argv.slice(2);
const lines = readFileSync(file, 'utf8').trim().split('\n');
const split = (l) => l.match(/("[^"]*"|[^,]*)(,|$)/g).map((c) => c.replace(/,$/, '').replace(/^"|"$/g, ''));
const head = split(lines[0]);
const rows = lines.slice(1).map(split);
const re = filter ? new RegExp(filter) : null;
const at = (f) => rows[Math.min(rows.length - 1, Math.floor(f * (rows.length - 1)))];
const el = head.indexOf('elapsed_s');
console.log(`${rows.length} samples over ${rows.at(-1)[el]} s`);
for (let i = 0; i < head.length; i++) {
  if (re && !re.test(head[i])) continue;
  const v = rows.map((r) => Number(r[i]));
  if (v.every((x) => !Number.isFinite(x))) continue;
  const half = Math.floor(rows.length / 2);
  const dt = (Number(rows.at(-1)[el]) - Number(rows[half][el])) / 600;
  const slope = dt > 0 ? (v.at(-1) - v[half]) / dt : NaN;
  console.log(`${head[i].padEnd(40)} ${[0, 0.25, 0.5, 0.75, 1].map((f) => at(f)[i]).join(' → ')}   max ${Math.max(...v.filter(Number.isFinite))}  last-half/10min ${slope.toFixed(1)}`);
}
