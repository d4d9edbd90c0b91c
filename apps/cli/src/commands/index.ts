import type { Command } from '../command.js';

/** One sub-command: its line in `crawl --help`, and its module, imported only when the command runs. */
export interface CommandEntry {
  summary: string;
  load(): Promise<Command>;
}

/**
 * The `crawl` sub-commands by name. The summaries live here, not in the command modules, so `crawl --help` imports
 * none of them: a command module pulls in Prisma, BullMQ, undici or Playwright, which cost about 2 s of start-up.
 */
export const COMMANDS: Record<string, CommandEntry> = {
  migrate: {
    summary: 'apply pending database migrations (prisma/migrations) to DATABASE_URL',
    load: async () => (await import('./migrate.js')).default,
  },
  prune: {
    // The default is @crawler/db's DEFAULT_RETENTION_DAYS (main.test.ts checks that they agree).
    summary: 'retention: delete fetch attempts older than N days (default 90) with their heuristics, old link events, and page versions past VERSIONS_KEEP / VERSIONS_KEEP_DAYS',
    load: async () => (await import('./prune.js')).default,
  },
  reconcile: {
    summary: 'give every unfinished link that no live job carries its job back (after Redis lost its data or jobs died); prints what it did',
    load: async () => (await import('./reconcile.js')).default,
  },
  classify: {
    summary: 'classify a response body from stdin: validation, the challenge (vendor, kind), heuristics and the probe decision (--json for the whole result)',
    load: async () => (await import('./classify.js')).default,
  },
  schedule: {
    summary: 'revisit schedules: how many links are due now, within an hour, a day, later, and the soonest ones (--limit N, --json)',
    load: async () => (await import('./schedule.js')).default,
  },
  enqueue: {
    summary: 'add URLs (arguments, --file, or stdin) to the crawl; invalid ones are reported one by one',
    load: async () => (await import('./enqueue.js')).default,
  },
  run: {
    summary: 'run the router and every configured fetcher in this process (--until-idle: exit when the queues are idle)',
    load: async () => (await import('./run.js')).default,
  },
  crawl: {
    summary: 'enqueue URLs or files of URLs, crawl until idle, and print what happened to every link (--json for scripts)',
    load: async () => (await import('./crawl.js')).default,
  },
  explain: {
    summary: "show a URL's heuristics, every fetcher's score and the decision the router would take",
    load: async () => (await import('./explain.js')).default,
  },
  demo: {
    summary: 'crawl a small local web twice and show the router learning (no internet needed)',
    load: async () => (await import('./demo.js')).default,
  },
  pauses: {
    summary: 'paused domains with reason, until when and paused links; pauses lift <domain> ends a pause and routes its links again',
    load: async () => (await import('./pauses.js')).default,
  },
  stats: {
    summary: 'success and ban rates by fetcher and domain, queue depths, learned share and learning velocity',
    load: async () => (await import('./stats.js')).default,
  },
  route: {
    summary: 'the legacy routing table (used when learning mode is off): route set|list|delete',
    load: async () => (await import('./route.js')).default,
  },
  analytics: {
    summary: "analytics importance: each heuristic's information gain about success, written to importance_score",
    load: async () => (await import('./analytics.js')).default,
  },
  content: {
    summary: 'print the stored page of a link (by id or URL): as fetched, as readable text, or as Markdown; --version N for an older one',
    load: async () => (await import('./content.js')).default,
  },
  export: {
    summary: 'stream stored pages as JSON Lines (latest versions) or WARC 1.1 (every visit, revisits included), filtered by time, link status and domain',
    load: async () => (await import('./export.js')).default,
  },
  events: {
    summary: 'link events: dispatch (deliver webhooks and the Redis stream), replay [--since T] [--id ID] (re-send dead letters), stats',
    load: async () => (await import('./events.js')).default,
  },
};
