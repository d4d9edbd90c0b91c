/** The routing-quality tables, in Markdown, from the runs of one benchmark invocation. */
import type { RoutingScenario } from './routing-scenario.js';
import type { StrategyMetrics } from './routing-metrics.js';

export interface ReportRun {
  strategy: string;
  describe: string;
  metrics: StrategyMetrics;
  crawlerDone: number;
  wallMs: number;
}

const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '∞');
const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

/** Ratio of a strategy's warm requests per page to the oracle's, measured in the same run (1.00 = as good). */
export function warmRatioToOracle(runs: readonly ReportRun[], strategy: string): number | null {
  const oracle = runs.find((r) => r.strategy === 'oracle')?.metrics.warm.requestsPerPage;
  const mine = runs.find((r) => r.strategy === strategy)?.metrics.warm.requestsPerPage;
  return oracle && mine !== undefined ? mine / oracle : null;
}

export function formatRoutingReport(scenario: RoutingScenario, runs: readonly ReportRun[]): string {
  const warmFrom = Math.ceil(scenario.rounds / 5);
  const lines = [
    `## Routing quality (${scenario.sites.length} domains, ${scenario.rounds} rounds × ${scenario.daysPerRound} simulated days, ${scenario.pagesPerRound} new pages per domain per round)`,
    '',
    '| strategy | pages | served | success | requests / served page | browser loads / page | blocks | warm requests / page (× oracle) | warm blocks | crawler said done | wall s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of runs) {
    const m = r.metrics;
    const ratio = warmRatioToOracle(runs, r.strategy);
    lines.push(
      `| ${r.strategy} | ${m.pages} | ${m.served} | ${pct(m.successRate)} | ${f2(m.requestsPerPage)} | ${f2(m.browserLoadsPerPage)} | ${m.blocks} | ${f2(m.warm.requestsPerPage)}${ratio === null ? '' : ` (${f2(ratio)}×)`} | ${m.warm.blocks} | ${r.crawlerDone} | ${(r.wallMs / 1000).toFixed(0)} |`,
    );
  }
  lines.push('', `Warm = rounds ${warmFrom}..${scenario.rounds - 1}. Served = the site delivered the page (its log, not the crawler's belief).`, '');
  lines.push('### Adaptation after a change of kind (pages of that site asked for after the change until every later page took one request from the right fetcher)', '');
  const changes = runs[0]?.metrics.adaptation ?? [];
  lines.push(`| site | change | ${runs.map((r) => r.strategy).join(' | ')} |`, `|---|---|${runs.map(() => '---:').join('|')}|`);
  for (const [i, c] of changes.entries()) {
    const cells = runs.map((r) => {
      const a = r.metrics.adaptation[i]!;
      return a.pagesToAdapt === null ? `never (${a.pagesAfterChange} pages)` : `${a.pagesToAdapt} pages / ${a.daysToAdapt!.toFixed(0)} d`;
    });
    lines.push(`| ${c.site} | ${c.change} | ${cells.join(' | ')} |`);
  }
  return `${lines.join('\n')}\n`;
}
