/**
 * Outcome write-behind at scale: a fetch outcome (one attempt with its heuristics, the link done, a page of ~30 KB)
 * written by OutcomeStore.applyMany in batches of `--batch`, against OutcomeStore.apply one at a time, on links
 * picked at random among `--links` in a throwaway database; sequential writers, interleaved rounds, wall time per
 * outcome (client compression included). Also the statement plan of the batched link update.
 *
 *   node bench/dist/outcome-batch-bench.js [--links 200000] [--batch 32] [--rounds 3] [--pg-url URL]
 */
import { LinkStore, OutcomeStore, type OutcomeWrite } from '@crawler/db';
import { createTestDatabase } from '@crawler/db/testing';
import { benchArgs } from './cli-args.js';

const { values } = benchArgs({
  script: 'outcome-batch-bench',
  options: {
    links: { type: 'string', default: '200000', description: 'links in the throwaway database; outcomes go to links picked at random' },
    batch: { type: 'string', default: '32', description: 'outcomes per applyMany batch; each writer writes 10 batches per round' },
    rounds: { type: 'string', default: '3', description: 'interleaved rounds of batched and one-by-one writes' },
    'pg-url': { type: 'string', placeholder: 'URL', description: 'Postgres server for the throwaway database (default TEST_PG_URL or the local one)' },
  },
});
const LINKS = Number(values.links);
const BATCH = Number(values.batch);
const ROUNDS = Number(values.rounds);
const PER_ROUND = BATCH * 10;

async function main(): Promise<void> {
  const db = await createTestDatabase('bench_outcome_batch', values['pg-url'] ? { serverUrl: values['pg-url'] } : {});
  try {
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO links (url, initial_url, domain, status, updated_at)
       SELECT 'https://h' || (g % 500) || '.test/p' || g, 'https://h' || (g % 500) || '.test/p' || g, 'h' || (g % 500) || '.test', 'fetching', now()
       FROM generate_series(1, $1::int) g`,
      LINKS,
    );
    await db.prisma.$executeRawUnsafe('ANALYZE links');
    const picked = await db.prisma.$queryRawUnsafe<{ id: string; url: string }[]>('SELECT id::text AS id, url FROM links ORDER BY random() LIMIT $1::int', ROUNDS * PER_ROUND * 2);
    const store = new OutcomeStore({ prisma: db.prisma });
    const text = `<html><body>${'lorem ipsum dolor sit amet, consectetur adipiscing elit '.repeat(540)}</body></html>`;
    const write = (l: { id: string; url: string }, i: number): OutcomeWrite => ({
      linkId: l.id,
      attempts: [{
        linkId: l.id, url: l.url, fetcher: 'simple_http', success: true, httpStatus: 200, selectionSource: 'learned',
        heuristics: [{ type: 'domain', value: new URL(l.url).hostname }, { type: 'has_content', value: 'true' }, { type: 'path_depth', value: '1' }],
      }],
      link: { status: 'done', fetcher: 'simple_http', lastErrorType: null, lastError: null },
      page: { linkId: l.id, body: Buffer.from(`${text}<!-- ${i} -->`), contentType: 'text/html', httpStatus: 200, finalUrl: l.url, fetcher: 'simple_http' },
    });
    console.log(`# outcome batches: ${LINKS} links, batches of ${BATCH}, ${PER_ROUND} outcomes per writer and round`);
    for (let round = 0; round < ROUNDS; round++) {
      const base = round * PER_ROUND * 2;
      const batched = picked.slice(base, base + PER_ROUND);
      const single = picked.slice(base + PER_ROUND, base + 2 * PER_ROUND);
      const timeBatched = async () => {
        const t0 = performance.now();
        for (let i = 0; i < batched.length; i += BATCH) {
          const out = await store.applyMany(batched.slice(i, i + BATCH).map((l, k) => write(l, i + k)));
          if (out.some((r) => r.status !== 'fulfilled')) throw new Error('a batched outcome failed');
        }
        return (performance.now() - t0) / batched.length;
      };
      const timeSingle = async () => {
        const t0 = performance.now();
        for (const [i, l] of single.entries()) await store.apply(write(l, i));
        return (performance.now() - t0) / single.length;
      };
      const [b, s] = round % 2 === 0 ? [await timeBatched(), await timeSingle()] : [await timeSingle(), await timeBatched()].reverse();
      console.log(`round ${round + 1}: batched ${b!.toFixed(3)} ms/outcome, one by one ${s!.toFixed(3)} ms/outcome, one by one ÷ batched ${(s! / b!).toFixed(2)}`);
    }
    const plan = await db.prisma.$queryRawUnsafe<Record<string, string>[]>(
      `EXPLAIN UPDATE links SET status = v.status, updated_at = now()
       FROM (SELECT * FROM jsonb_to_recordset('[]'::jsonb) AS r(id uuid, status text) ORDER BY id) AS v
       WHERE links.id = v.id AND links.status NOT IN ('done', 'failed') RETURNING links.id::text AS id`,
    );
    console.log(`\nbatched link update plan:\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`);
    const links = new LinkStore(db.prisma);
    const rest = picked.slice(0, BATCH);
    const out = await links.updateManyUnlessFinished(rest.map((l) => ({ id: l.id, patch: { status: 'routing' } })));
    console.log(`batched link update of ${BATCH} finished links: ${out.filter((r) => r.status === 'fulfilled' && r.value === false).length} left alone`);
  } finally {
    await db.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
