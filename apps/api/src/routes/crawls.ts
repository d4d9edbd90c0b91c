import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CRAWL_SCOPES } from '@crawler/core';
import type { CrawlStore, CrawlView } from '@crawler/db';
import { CrawlSpecError, type CrawlSpec, type CrawlFrontier } from '@crawler/pipeline';
import { sendInvalidBody } from './invalid-body.js';

/** What the crawls routes need. */
export interface CrawlsRouteDeps {
  frontier: Pick<CrawlFrontier, 'create'>;
  store: Pick<CrawlStore, 'view' | 'cancel'>;
  /** Most seeds one POST /crawls may carry. */
  maxSeeds: number;
}

const limit = z.number().int().positive().nullable().optional();
const patterns = z.array(z.string().min(1).max(2_000)).max(100).optional();

const PostBody = z
  .object({
    seeds: z.array(z.string()).min(1),
    scope: z.enum(CRAWL_SCOPES).optional(),
    include: patterns,
    exclude: patterns,
    maxDepth: z.number().int().min(0).nullable().optional(),
    maxPages: limit,
    maxPagesPerHost: limit,
    followNofollow: z.boolean().optional(),
    trackingParams: z.array(z.string().min(1).max(200)).max(500).nullable().optional(),
    sitemaps: z.boolean().optional(),
    // Checked by the frontier, which names the field in its 400.
    maxAgeSeconds: z.unknown().optional(),
    revisit: z.unknown().optional(),
  })
  .strict();

/** The crawl as the API shows it. */
export function crawlBody(v: CrawlView): Record<string, unknown> {
  return {
    id: v.id,
    status: v.state,
    seeds: v.seeds,
    scope: v.scope,
    include: v.include,
    exclude: v.exclude,
    maxDepth: v.maxDepth,
    maxPages: v.maxPages,
    maxPagesPerHost: v.maxPagesPerHost,
    followNofollow: v.followNofollow,
    sitemaps: v.sitemaps,
    maxAgeSeconds: v.maxAgeSeconds,
    revisit: v.revisit,
    createdAt: v.createdAt.toISOString(),
    counters: v.counters,
    outOfScopeSamples: v.outOfScopeSamples,
  };
}

/** POST /crawls (start a link-following crawl), GET /crawls/:id (state and counters), DELETE /crawls/:id (cancel). */
export function registerCrawlRoutes(app: FastifyInstance, deps: CrawlsRouteDeps): void {
  app.post('/crawls', async (req, reply) => {
    const parsed = PostBody.safeParse(req.body);
    if (!parsed.success) {
      return sendInvalidBody(reply, `expected {"seeds": ["https://…"], "scope"?: ${CRAWL_SCOPES.join('|')}, "maxDepth"?, "maxPages"?, "maxPagesPerHost"?, "include"?, "exclude"?, "followNofollow"?, "trackingParams"?, "sitemaps"?}`, parsed.error);
    }
    if (parsed.data.seeds.length > deps.maxSeeds) {
      return reply.code(413).send({ error: 'too_many_seeds', message: `at most ${deps.maxSeeds} seeds per crawl (got ${parsed.data.seeds.length})` });
    }
    try {
      const created = await deps.frontier.create(parsed.data as CrawlSpec);
      return reply.code(201).send({
        id: created.crawl.id,
        admitted: created.admitted,
        rejected: created.rejected,
        ...(created.sitemaps ? { sitemaps: { files: created.sitemaps.files.length, urls: created.sitemaps.urls.length, errors: created.sitemaps.errors, truncated: created.sitemaps.truncated } } : {}),
        ...(created.deferred ? { deferred: { ...created.deferred, message: 'the crawl and its links are stored; Redis cannot take their jobs now, and the reconciler adds them when it is back: do not create the crawl again' } } : {}),
      });
    } catch (err) {
      if (err instanceof CrawlSpecError) return reply.code(400).send({ error: 'invalid_crawl', field: err.field, message: err.message });
      throw err;
    }
  });

  app.get<{ Params: { id: string } }>('/crawls/:id', async (req, reply) => {
    const view = await deps.store.view(req.params.id);
    if (!view) return reply.code(404).send({ error: 'not_found', message: `no crawl ${req.params.id}` });
    return crawlBody(view);
  });

  app.delete<{ Params: { id: string } }>('/crawls/:id', async (req, reply) => {
    await deps.store.cancel(req.params.id);
    // Cancelling a crawl that is already cancelled (or done) answers with its state: the request is idempotent.
    const view = await deps.store.view(req.params.id);
    if (!view) return reply.code(404).send({ error: 'not_found', message: `no crawl ${req.params.id}` });
    return crawlBody(view);
  });
}
