/**
 * Routing over exits: cost units and blocks per page of four strategies on one mixed web (exits-model.ts), each run
 * in this process on a fresh copy of the same seeded web, reported against the oracle of the same run.
 * `node bench/dist/routing-exits.js [--sites 50] [--rounds 60] [--pages 2] [--seed 7]`; results go to
 * bench/results/routing-exits-latest.{json,md}.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs } from './cli-args.js';
import { escalationStrategy, learnedStrategy, mixedWeb, oracleStrategy, runExitModel, topTierStrategy, type ExitRunResult } from './exits-model.js';

/** Run every strategy on the same web; ratios are against the oracle's cost per page. */
export function runRoutingExits(opts: { sites: number; rounds: number; pages: number; seed: number }): ExitRunResult[] {
  const web = mixedWeb(opts.sites, opts.rounds, opts.seed);
  const round = { value: 0 };
  const strategies = [oracleStrategy(() => round.value), learnedStrategy(), escalationStrategy(), topTierStrategy()];
  const results = strategies.map((s) => runExitModel(web, s, { rounds: opts.rounds, pagesPerRound: opts.pages, currentRound: round }));
  const oracle = results[0]!.costPerPage;
  return results.map((r) => ({ ...r, costVsOracle: oracle > 0 ? r.costPerPage / oracle : undefined }));
}

export function formatExitsTable(results: readonly ExitRunResult[]): string {
  const rows = results.map(
    (r) => `| ${r.strategy} | ${r.pages} | ${r.got} | ${(r.requests / Math.max(1, r.got)).toFixed(2)} | ${r.costPerPage.toFixed(3)} | ${r.costVsOracle?.toFixed(2) ?? '-'}× | ${r.blocksPerPage.toFixed(3)} |`,
  );
  return ['| strategy | pages | got | requests / page | cost units / page | × oracle | blocks / page |', '|---|---:|---:|---:|---:|---:|---:|', ...rows].join('\n');
}

async function main(): Promise<void> {
  const { values } = benchArgs({
    script: 'routing-exits',
    options: {
      sites: { type: 'string', default: '50', description: 'sites of the simulated mixed web' },
      rounds: { type: 'string', default: '60', description: 'rounds; some sites change the exit they need half-way' },
      pages: { type: 'string', default: '2', description: 'pages per site in each round' },
      seed: { type: 'string', default: '7', description: "seed of the web's random choices (the same seed, the same web)" },
    },
  });
  const opts = { sites: Number(values.sites), rounds: Number(values.rounds), pages: Number(values.pages), seed: Number(values.seed) };
  const results = runRoutingExits(opts);
  const table = formatExitsTable(results);
  process.stdout.write(`${table}\n`);
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'routing-exits-latest.json'), JSON.stringify({ at: new Date().toISOString(), opts, results }, null, 2));
  writeFileSync(join(dir, 'routing-exits-latest.md'), `# Routing over exits (${new Date().toISOString()})\n\n${JSON.stringify(opts)}\n\n${table}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
