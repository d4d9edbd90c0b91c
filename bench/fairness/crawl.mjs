// Fairness audit: BIG links of one site, then after WAIT_S seconds SMALL_LINKS over the small sites; runs RUN_S
// seconds with the default politeness, then prints SQL figures. Args via env. Leaves the database for inspection.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { createTestDatabase } from '@crawler/db/testing';
import { loadConfig, createRuntime } from '@crawler/pipeline';
import { deleteRedisPrefix } from '@crawler/queue';
const BIG = Number(process.env.BIG ?? 5000), SMALL_LINKS = Number(process.env.SMALL_LINKS ?? 200), WAIT_S = Number(process.env.WAIT_S ?? 30), RUN_S = Number(process.env.RUN_S ?? 120);
const web = spawn(process.execPath, [new URL('./web.mjs', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
process.on('exit', () => web.kill('SIGTERM'));
const origins = JSON.parse(await new Promise((r) => createInterface({ input: web.stdout }).once('line', r)));
const db = await createTestDatabase(`fair_${process.env.LABEL ?? 'x'}`);
const prefix = `{fair_${process.env.LABEL ?? 'x'}_${process.pid}}`;
const config = loadConfig({ DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_PREFIX: prefix, FETCH_ALLOW_HOSTS: '127.0.0.0/8', LOG_LEVEL: 'warn', FETCHERS: process.env.FETCHERS ?? 'simple_http', ...(process.env.EXTRA ? JSON.parse(process.env.EXTRA) : {}) });
const runtime = createRuntime(config, { prisma: db.prisma });
const redis = new Redis('redis://127.0.0.1:6379');
const t0 = Date.now();
await runtime.enqueue(Array.from({ length: BIG }, (_, i) => `${origins.big}/p/${i}`), process.env.BIG_PRIORITY ? { priority: Number(process.env.BIG_PRIORITY) } : {});
runtime.startWorkers();
const cpu0 = process.cpuUsage();
const mem = async () => { const info = await redis.info('memory'); return Number(/used_memory:(\d+)/.exec(info)[1]); };
const sampler = setInterval(async () => {
  const zc = await redis.zcard(`${prefix}:fetch-simple_http:delayed`).catch(() => -1);
  const wl = await redis.llen(`${prefix}:fetch-simple_http:wait`).catch(() => -1);
  const rz = await redis.zcard(`${prefix}:route:delayed`).catch(() => -1);
  const rw = await redis.llen(`${prefix}:route:wait`).catch(() => -1);
  const done = await db.prisma.$queryRawUnsafe(`select count(*)::int n from links where status='done'`);
  console.log(`t=${((Date.now() - t0) / 1000).toFixed(0)}s fetch delayed=${zc} wait=${wl} route delayed=${rz} wait=${rw} done=${done[0].n} cpu=${((process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1e6).toFixed(1)}s`);
}, 10_000);
await new Promise((r) => setTimeout(r, WAIT_S * 1000));
const smallUrls = Array.from({ length: SMALL_LINKS }, (_, i) => `${origins.small[i % origins.small.length]}/p/${Math.floor(i / origins.small.length)}`);
const tSmall = Date.now();
await runtime.enqueue(smallUrls);
console.log(`small enqueued at t=${((tSmall - t0) / 1000).toFixed(1)}s`);
await new Promise((r) => setTimeout(r, RUN_S * 1000));
clearInterval(sampler);
const q = (s) => db.prisma.$queryRawUnsafe(s);
const cpu = process.cpuUsage(cpu0);
console.log('process CPU s', ((cpu.user + cpu.system) / 1e6).toFixed(1), 'redis used_memory', await mem());
console.log(JSON.stringify(await q(`
with firsts as (select l.id, l.domain, l.created_at, min(a.attempted_at) first_at, count(a.id) n from links l left join fetcher_attempts a on a.link = l.id group by l.id)
select case when domain like '127.0.0.10%' then 'big' else 'small' end site, count(*)::int links, count(first_at)::int fetched,
  round(percentile_cont(0.5) within group (order by extract(epoch from first_at - created_at))::numeric, 1) p50_wait_s,
  round(percentile_cont(0.9) within group (order by extract(epoch from first_at - created_at))::numeric, 1) p90_wait_s,
  round(max(extract(epoch from first_at - created_at))::numeric, 1) max_wait_s
from firsts group by 1`), null, 0));
console.log(JSON.stringify(await q(`select case when l.domain like '127.0.0.10%' then 'big' else 'small' end site, count(*)::int attempts, round(count(*)/ greatest(extract(epoch from max(a.attempted_at)-min(a.attempted_at)),1)::numeric,2) per_s, min(a.attempted_at) first, max(a.attempted_at) last from fetcher_attempts a join links l on l.id=a.link group by 1`)));
console.log(JSON.stringify(await q(`select status, count(*)::int from links group by 1`)));
// small-site first fetch vs the big site's attempt count in the same window
console.log(JSON.stringify(await q(`select (select count(*)::int from fetcher_attempts a join links l on l.id=a.link where l.domain like '127.0.0.10%' and a.attempted_at >= (select min(created_at) from links where domain not like '127.0.0.10%') and a.attempted_at <= (select max(fa) from (select min(a2.attempted_at) fa from fetcher_attempts a2 join links l2 on l2.id=a2.link where l2.domain not like '127.0.0.10%' group by l2.id) x)) big_attempts_until_last_small_first`)));
await runtime.close({ drainTimeoutMs: 5000 });
await deleteRedisPrefix(redis, prefix); redis.disconnect();
if (!process.env.KEEP_DB) await db.drop(); else console.log('db kept', db.url);
web.kill('SIGTERM');
process.exit(0);
