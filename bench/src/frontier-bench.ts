/**
 * The crawl frontier's admission, measured alone: W concurrent "workers" hand pages of a generated site to
 * CrawlFrontier.discover (link extraction, scope, the Postgres admission transaction), once with every link going to
 * Postgres and once with the Redis seen cache in front. Route jobs are not enqueued (a no-op), so this is the
 * frontier's own cost. Also reports link extraction alone and the seen cache's Redis memory per URL.
 *
 *   node dist/frontier-bench.js [--pages 3000] [--links 30] [--workers 16]
 */
import { Redis } from 'ioredis';
import { extractLinks, silentLogger } from '@crawler/core';
import { createTestDatabase } from '@crawler/db/testing';
import { CrawlStore } from '@crawler/db';
import { CrawlFrontier, RedisSeenCache } from '@crawler/pipeline';
import { benchArgs } from './cli-args.js';
import { benchEnv } from './env.js';

const { values } = benchArgs({
  script: 'frontier-bench',
  options: {
    pages: { type: 'string', default: '3000', description: 'pages of the generated site handed to the frontier, in each mode' },
    links: { type: 'string', default: '30', description: 'links per page' },
    workers: { type: 'string', default: '16', description: 'concurrent workers calling CrawlFrontier.discover' },
  },
});
const pages = Number(values.pages);
const linksPerPage = Number(values.links);
const workers = Number(values.workers);
const origin = 'https://bench.example';

// Page i links to pages spread over the whole site, so most links are to pages already seen (as on real sites).
function pageHtml(i: number): string {
  const links: string[] = [];
  for (let k = 0; k < linksPerPage; k++) links.push(`<a href="/p/${(i * 31 + k * 97 + k * k) % pages}">link ${k}</a>`);
  return `<html><head><title>p${i}</title></head><body><p>${'Lorem ipsum dolor sit amet. '.repeat(60)}</p>${links.join('')}</body></html>`;
}

const htmls = Array.from({ length: pages }, (_, i) => pageHtml(i));
let t = performance.now();
for (let i = 0; i < pages; i++) extractLinks(htmls[i]!, `${origin}/p/${i}`);
const extractUs = ((performance.now() - t) * 1000) / pages;

const redis = new Redis(benchEnv().redisUrl);
const prefix = `{crawler_bench_frontier_${process.pid}}`;
const results: Record<string, unknown> = { pages, linksPerPage, workers, extractLinksUsPerPage: Math.round(extractUs) };

for (const mode of ['postgres', 'redis+postgres'] as const) {
  const db = await createTestDatabase(`bench_frontier_${mode === 'postgres' ? 'pg' : 'redis'}`);
  try {
    const store = new CrawlStore(db.prisma);
    const frontier = new CrawlFrontier({
      store,
      enqueueRoutes: async () => undefined,
      logger: silentLogger,
      seenCache: mode === 'postgres' ? undefined : new RedisSeenCache({ redis, prefix: `${prefix}_${mode}` }),
    });
    const created = await frontier.create({ seeds: [`${origin}/p/0`], scope: 'same-origin' });
    const crawlId = created.crawl.id;
    const linkIds = new Map((await db.prisma.link.findMany({ select: { id: true, url: true } })).map((l) => [l.url, l.id]));
    let next = 0;
    t = performance.now();
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let i = next++; i < pages; i = next++) {
          const url = `${origin}/p/${i}`;
          await frontier.discover({ link: { id: linkIds.get(`${origin}/p/0`)!, url, crawlId, depth: 0 }, finalUrl: url, contentType: 'text/html', httpStatus: 200, text: htmls[i]! });
        }
      }),
    );
    const ms = performance.now() - t;
    const view = (await store.view(crawlId))!;
    const seenKey = `${prefix}_${mode}:crawl-seen:${crawlId}`;
    const members = await redis.scard(seenKey);
    const bytes = members > 0 ? Number(await redis.memory('USAGE', seenKey)) : 0;
    results[mode] = {
      ms: Math.round(ms), pagesPerSec: Math.round((pages / ms) * 1000), admitted: view.counters.admitted, duplicate: view.counters.duplicate,
      ...(members > 0 ? { redisMembers: members, redisBytesPerUrl: Math.round(bytes / members) } : {}),
    };
    process.stderr.write(`${mode}: ${JSON.stringify(results[mode])}\n`);
    if (members > 0) await redis.del(seenKey);
  } finally {
    await db.drop();
  }
}
const pg = results.postgres as { pagesPerSec: number };
const rc = results['redis+postgres'] as { pagesPerSec: number };
results.redisOverPostgres = Math.round((rc.pagesPerSec / pg.pagesPerSec) * 100) / 100;
redis.disconnect();
process.stdout.write(`${JSON.stringify(results, null, 1)}\n`);
