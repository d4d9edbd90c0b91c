// Feeds the API continuously: every SOAK_TICK_MS, one new page per sim-web site (browser sites every 3rd tick),
// a hostile page, and at start a fixed set of links with a revisit schedule (fixed SOAK_REVISIT_S, default 60 s).
// Usage: node producer.mjs sites.json http://127.0.0.1:PORT
import { readFileSync } from 'node:fs';
const [sitesFile, api] = process.argv.slice(2);
const sites = JSON.parse(readFileSync(sitesFile, 'utf8'));
const tickMs = Number(process.env.SOAK_TICK_MS ?? 10_000);
const revisitS = Number(process.env.SOAK_REVISIT_S ?? 60);
const BROWSER = new Set(['spa', 'interstitial', 'botwall']);
const post = async (body) => {
  const r = await fetch(`${api}/links`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) console.error('POST /links', r.status, await r.text());
  return r.ok;
};
// Revisited set: the changing pages, one static, one spa, one interstitial, one ratelimit page 0, two hostile pages.
const revisit = [];
for (const s of sites) {
  if (s.pages) revisit.push(...s.pages);
  else if (s.kind === 'hostile') revisit.push(`${s.origin}/ok`, `${s.origin}/slow-body`, `${s.origin}/500`);
}
for (const kind of ['static', 'spa', 'interstitial', 'ratelimit', 'botwall']) {
  const s = sites.find((x) => x.kind === kind);
  revisit.push(`${s.origin}${s.pagePrefix}0${s.pageSuffix}`);
}
while (!(await post({ urls: revisit, revisit: { mode: 'fixed', intervalSeconds: revisitS } }).catch(() => false))) await new Promise((r) => setTimeout(r, 2000));
console.log(`revisit set: ${revisit.length} links every ${revisitS}s`);
let n = 1;
let sent = 0;
for (;;) {
  const urls = [];
  for (const s of sites) {
    if (s.pagePrefix === undefined) continue;
    if (BROWSER.has(s.kind) && n % 3 !== 0) continue;
    urls.push(`${s.origin}${s.pagePrefix}${n}${s.pageSuffix}`);
  }
  const h = sites.find((x) => x.kind === 'hostile');
  urls.push(`${h.origin}${h.paths[n % h.paths.length]}?n=${n}`);
  if (await post({ urls }).catch((e) => (console.error(String(e)), false))) sent += urls.length;
  if (n % 30 === 0) console.log(JSON.stringify({ at: new Date().toISOString(), tick: n, sent }));
  n++;
  await new Promise((r) => setTimeout(r, tickMs));
}
