import type { Command } from '../command.js';

/**
 * The `crawl` sub-commands by name. Each lives in its own module under commands/ and is loaded lazily,
 * so `crawl classify` does not pay for Redis, Prisma or Playwright.
 */
export const COMMANDS: Record<string, () => Promise<Command>> = {
  migrate: async () => (await import('./migrate.js')).default,
  prune: async () => (await import('./prune.js')).default,
  classify: async () => (await import('./classify.js')).default,
  enqueue: async () => (await import('./enqueue.js')).default,
  run: async () => (await import('./run.js')).default,
  crawl: async () => (await import('./crawl.js')).default,
  explain: async () => (await import('./explain.js')).default,
  demo: async () => (await import('./demo.js')).default,
  stats: async () => (await import('./stats.js')).default,
  route: async () => (await import('./route.js')).default,
  analytics: async () => (await import('./analytics.js')).default,
};
