import { parseArgs } from 'node:util';
import { DomainPauses } from '@crawler/pipeline';
import { UsageError, type Command } from '../command.js';
import { cliLogger, openRuntime, reportingConfigFrom } from '../crawler/cli-context.js';

const USAGE = `usage: crawl pauses [--json]              paused domains: reason, until when, paused links
       crawl pauses lift <domain> [--json]  end a domain's pause; its paused links are routed again now`;

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    const [sub, domain, ...rest] = parsed.positionals;
    if (sub !== undefined && sub !== 'lift') throw new UsageError(`unknown sub-command '${sub}'\n${USAGE}`);
    if (sub === 'lift' && (!domain || rest.length > 0)) throw new UsageError(`crawl pauses lift takes one domain\n${USAGE}`);
    const config = reportingConfigFrom(io);
    const runtime = await openRuntime(config, { logger: cliLogger(io, config.logLevel) });
    try {
      const pauses = new DomainPauses({ redis: runtime.redis, prisma: runtime.prisma, queues: runtime.queues, config });
      if (sub === 'lift') {
        const lifted = await pauses.lift(domain!);
        if (parsed.values.json) io.stdout.write(`${JSON.stringify(lifted)}\n`);
        else io.stdout.write(`${lifted.domain}: ${lifted.domainPauseLifted ? 'domain pause lifted' : 'no domain pause was running'}, ${lifted.linksResumed} paused links routed again\n`);
        return 0;
      }
      const list = await pauses.list();
      if (parsed.values.json) {
        io.stdout.write(`${JSON.stringify(list)}\n`);
        return 0;
      }
      if (list.length === 0) {
        io.stdout.write('no paused domains\n');
        return 0;
      }
      // The site's own pause (the fleet asks it nothing until then) and when its last paused link is routed again
      // (links resume one per politeness turn after it, or back off on their own when the domain is not paused).
      const rows = list.map((p) => [p.domain, p.reason ?? '-', p.domainPausedUntil ?? '-', p.until, String(p.pausedLinks)]);
      const head = ['domain', 'reason', 'domain paused until', 'last link resumes', 'paused links'];
      const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      for (const r of [head, ...rows]) io.stdout.write(`${r.map((c, i) => c.padEnd(width[i]!)).join('  ').trimEnd()}\n`);
      if (list.some((p) => p.domainPausedUntil === null)) {
        io.stdout.write('(domain paused until "-": the site is not paused; its links back off on their own after their errors)\n');
      }
      return 0;
    } finally {
      await runtime.close({ drainTimeoutMs: 0 });
    }
  },
};

export default command;
