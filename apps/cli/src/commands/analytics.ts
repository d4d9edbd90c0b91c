import { parseArgs } from 'node:util';
import { ImportanceAnalytics, createPrismaClient, type HeuristicGain } from '@crawler/db';
import { UsageError, type Command } from '../command.js';
import { databaseUrlFrom } from '../env.js';
import { formatTable } from './stats.js';

const USAGE = 'usage: crawl analytics importance [--min-samples N] [--json]';

/** What `crawl analytics importance` reports. */
export interface ImportanceReport {
  /** P(success) over every attempt; null without attempts. */
  baselineSuccessRate: number | null;
  minSamples: number;
  /** attempt_heuristics rows whose importance_score changed. */
  rowsUpdated: number;
  gains: HeuristicGain[];
}

/** The report as terminal text: the baseline, then every heuristic by information gain. */
export function formatImportanceReport(r: ImportanceReport): string {
  const head = `baseline success rate ${r.baselineSuccessRate === null ? 'n/a (no attempts)' : r.baselineSuccessRate.toFixed(3)}; ${r.rowsUpdated} importance_score rows updated; heuristics with more than ${r.minSamples} samples:`;
  if (r.gains.length === 0) return `${head}\n  (none yet)\n`;
  const rows = r.gains.map((g) => [g.heuristicType, g.heuristicValue, g.sampleSize, g.conditionalSuccessRate.toFixed(3), g.informationGain.toFixed(3)]);
  return `${head}\n${formatTable(['type', 'value', 'samples', 'P(success|h)', 'gain'], rows)}\n`;
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' }, 'min-samples': { type: 'string' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    if (parsed.positionals.length !== 1 || parsed.positionals[0] !== 'importance') throw new UsageError(`expected 'importance'\n${USAGE}`);
    const raw = parsed.values['min-samples'];
    const minSamples = raw === undefined ? 10 : Number(raw);
    if (!Number.isInteger(minSamples) || minSamples < 0) throw new UsageError(`--min-samples must be a non-negative integer (got ${JSON.stringify(raw)})`);
    const prisma = createPrismaClient(databaseUrlFrom(io.env));
    try {
      const analytics = new ImportanceAnalytics({ prisma });
      const rowsUpdated = await analytics.updateImportanceScores({ minSamples });
      const report: ImportanceReport = {
        baselineSuccessRate: await analytics.baselineSuccessRate(),
        minSamples,
        rowsUpdated,
        gains: await analytics.conditionalSuccessRates({ minSamples }),
      };
      io.stdout.write(parsed.values.json ? `${JSON.stringify(report)}\n` : formatImportanceReport(report));
      return 0;
    } finally {
      await prisma.$disconnect();
    }
  },
};

export default command;
