// Soak sampler: every SOAK_SAMPLE_MS (30 s) appends one CSV row of process, Chromium, Redis and Postgres figures.
// Usage: node sample.mjs out.csv   with env DATABASE_URL, REDIS_URL, QUEUE_PREFIX and
//   SOAK_PIDS="router=PID,http=PID,browser=PID,api=PID"  SOAK_METRICS="router=URL,http=URL,browser=URL,api=URL"
import { readFileSync, readdirSync, appendFileSync, existsSync, writeFileSync } from 'node:fs';
import Redis from 'ioredis';
import pg from 'pg';

const out = process.argv[2] ?? 'soak.csv';
const everyMs = Number(process.env.SOAK_SAMPLE_MS ?? 30_000);
const prefix = process.env.QUEUE_PREFIX ?? '{crawler}';
const pids = Object.fromEntries((process.env.SOAK_PIDS ?? '').split(',').filter(Boolean).map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)]));
const metrics = Object.fromEntries((process.env.SOAK_METRICS ?? '').split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: false });
const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
await db.connect();
const t0 = Date.now();

const read = (p) => { try { return readFileSync(p, 'utf8'); } catch { return ''; } };
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(read(`/proc/${pid}/status`))?.[1] ?? 0);
const fds = (pid) => { try { return readdirSync(`/proc/${pid}/fd`).length; } catch { return 0; } };
function ppidMap() {
  const m = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const st = read(`/proc/${d}/stat`);
    const close = st.lastIndexOf(')');
    if (close < 0) continue;
    m.set(Number(d), { ppid: Number(st.slice(close + 2).split(' ')[1]), comm: st.slice(st.indexOf('(') + 1, close) });
  }
  return m;
}
function descendants(root, m) {
  const kids = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop();
    for (const [pid, v] of m) if (v.ppid === p) { kids.push(pid); stack.push(pid); }
  }
  return kids;
}
async function heapOf(url) {
  try {
    const ctl = AbortSignal.timeout(3000);
    const text = await (await fetch(url, { signal: ctl })).text();
    const g = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN);
    return { heap: g('nodejs_heap_size_used_bytes'), handles: g('nodejs_active_handles_total'), lag: g('nodejs_eventloop_lag_p99_seconds') };
  } catch { return { heap: NaN, handles: NaN, lag: NaN }; }
}
async function redisFigures() {
  const info = await redis.info('memory');
  const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
  let cursor = '0';
  const keys = [];
  do {
    const [c, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = c; keys.push(...batch);
  } while (cursor !== '0');
  const q = {};
  const pipe = redis.pipeline();
  const wanted = [];
  for (const k of keys) {
    const m = /:([a-z_-]+):(wait|active|delayed|completed|failed|prioritized|paused|events)$/.exec(k);
    if (m) { wanted.push([m[1], m[2], k]); pipe.type(k); }
  }
  const types = (await pipe.exec()).map(([, t]) => t);
  const p2 = redis.pipeline();
  wanted.forEach(([, , k], i) => { const t = types[i]; if (t === 'list') p2.llen(k); else if (t === 'zset') p2.zcard(k); else if (t === 'stream') p2.xlen(k); else p2.exists(k); });
  const lens = (await p2.exec()).map(([, n]) => n);
  wanted.forEach(([queue, set], i) => { const key = `q_${queue}_${set}`; q[key] = (q[key] ?? 0) + Number(lens[i]); });
  // Keys by kind: job hashes vs the rest (per-domain politeness, pauses, caches…), by the segment after the prefix.
  const byFamily = {};
  for (const k of keys) {
    const rest = k.slice(prefix.length + 1);
    const fam = rest.split(':')[0] + (/^\w+:[\w.-]+$/.test(rest) && !/^(route|fetch)/.test(rest) ? '' : '');
    byFamily[fam] = (byFamily[fam] ?? 0) + 1;
  }
  const evLen = await redis.xlen(`${prefix}:events`).catch(() => 0);
  // Bytes of our own keys (the server is shared: used_memory is everyone's).
  let bytes = 0;
  for (let i = 0; i < keys.length; i += 500) {
    const p3 = redis.pipeline();
    for (const k of keys.slice(i, i + 500)) p3.memory('USAGE', k, 'SAMPLES', '0');
    for (const [, n] of await p3.exec()) bytes += Number(n ?? 0);
  }
  return { used, keys: keys.length, q, byFamily, evLen, bytes };
}
async function pgFigures() {
  const r = {};
  const one = async (sql) => (await db.query(sql)).rows[0];
  Object.assign(r, await one(`select count(*)::int links, count(*) filter (where status='done')::int links_done,
    count(*) filter (where status='failed')::int links_failed, count(*) filter (where status in ('queued','routing','fetching','paused'))::int links_open,
    count(*) filter (where next_fetch_at is not null)::int links_scheduled, count(*) filter (where next_fetch_at < now() - interval '60 seconds')::int revisit_overdue_60s from links`));
  Object.assign(r, await one(`select (select count(*) from fetcher_attempts)::int attempts, (select count(*) from attempt_heuristics)::int heuristics,
    (select count(*) from fetched_content)::int contents, (select count(*) from page_visits)::int visits, (select count(*) from link_events)::int link_events,
    (select count(*) from link_events where streamed_at is null)::int link_events_unstreamed`).catch(async () => one(`select (select count(*) from fetcher_attempts)::int attempts, (select count(*) from attempt_heuristics)::int heuristics,
    (select count(*) from fetched_content)::int contents, (select count(*) from page_visits)::int visits, (select count(*) from link_events)::int link_events`)));
  const sizes = (await db.query(`select c.relname, pg_total_relation_size(c.oid) sz, coalesce(s.n_dead_tup,0) dead
    from pg_class c left join pg_stat_user_tables s on s.relid=c.oid where c.relkind in ('r','p') and c.relnamespace='public'::regnamespace`)).rows;
  let attemptsBytes = 0, heurBytes = 0, dead = 0, partitions = 0;
  for (const s of sizes) {
    dead += Number(s.dead);
    if (s.relname.startsWith('fetcher_attempts')) { attemptsBytes += Number(s.sz); if (s.relname !== 'fetcher_attempts') partitions++; }
    else if (s.relname.startsWith('attempt_heuristics')) heurBytes += Number(s.sz);
    else if (['links', 'fetched_content', 'page_visits', 'link_events'].includes(s.relname)) { r[`${s.relname}_bytes`] = Number(s.sz); r[`${s.relname}_dead`] = Number(s.dead); }
  }
  Object.assign(r, { attempts_bytes: attemptsBytes, heuristics_bytes: heurBytes, attempt_partitions: partitions, dead_total: dead });
  r.db_bytes = Number((await one(`select pg_database_size(current_database()) b`)).b);
  r.pg_backends = Number((await one(`select count(*) n from pg_stat_activity where datname=current_database()`)).n);
  return r;
}

let header = null;
async function sample() {
  const row = { at: new Date().toISOString(), elapsed_s: Math.round((Date.now() - t0) / 1000) };
  const m = ppidMap();
  for (const [name, pid] of Object.entries(pids)) {
    row[`${name}_rss_kb`] = rssKb(pid); row[`${name}_fds`] = fds(pid);
    if (metrics[name]) { const h = await heapOf(metrics[name]); row[`${name}_heap`] = h.heap; row[`${name}_handles`] = h.handles; }
  }
  if (pids.browser) {
    const kids = descendants(pids.browser, m).filter((p) => /chrom/i.test(m.get(p)?.comm ?? ''));
    row.chromium_procs = kids.length;
    row.chromium_rss_kb = kids.reduce((a, p) => a + rssKb(p), 0);
    row.browser_tree_fds = kids.reduce((a, p) => a + fds(p), 0);
    // Chromium helpers reparented away from the fetcher (crashpad handlers are, by design; a browser that outlived its
    // relaunch would be too): ours carry the fetcher's QUEUE_PREFIX in their environment.
    const mine = `QUEUE_PREFIX=${prefix}`;
    row.chromium_orphans = [...m].filter(([p, v]) => /chrom/i.test(v.comm) && !kids.includes(p) && read(`/proc/${p}/environ`).split('\0').includes(mine)).length;
  }
  const rf = await redisFigures();
  Object.assign(row, { redis_used: rf.used, redis_prefix_bytes: rf.bytes, redis_keys: rf.keys, events_stream: rf.evLen });
  for (const q of ['route', 'fetch-simple_http', 'fetch-playwright', 'fetch-playwright_stealth'])
    for (const set of ['wait', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'events']) row[`q_${q}_${set}`] = rf.q[`q_${q}_${set}`] ?? 0;
  row.redis_families = Object.entries(rf.byFamily).sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k}=${v}`).join(' ');
  Object.assign(row, await pgFigures());
  if (!header) { header = Object.keys(row); if (!existsSync(out)) writeFileSync(out, header.join(',') + '\n'); }
  appendFileSync(out, header.map((k) => { const v = row[k]; return typeof v === 'string' && /[ ,]/.test(v) ? `"${v}"` : v ?? ''; }).join(',') + '\n');
}
const loop = async () => { try { await sample(); } catch (e) { console.error('sample failed', e); } };
await loop();
setInterval(loop, everyMs);
