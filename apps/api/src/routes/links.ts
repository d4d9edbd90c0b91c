import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { LinkStore, type PrismaClient } from '@crawler/db';
import { enqueueLinks, type AcceptedLink, type LinkRepo, type RejectedLink } from '@crawler/pipeline';
import type { JobQueues } from '@crawler/queue';
import type { Counter } from 'prom-client';
import { sendInvalidBody } from './invalid-body.js';

/** What the links routes need. */
export interface LinksRouteDeps {
  prisma: PrismaClient;
  links: LinkRepo;
  queues: JobQueues;
  maxBatchSize: number;
  /** crawler_api_links_total{outcome}. */
  linksCounter: Counter<'outcome'>;
}

// Items are `unknown` on purpose: one bad entry is a per-URL error in the response, not a 400 for the batch.
const PostBody = z.union([
  z.object({ urls: z.array(z.unknown()), learningMode: z.boolean().optional() }).strict(),
  z.object({ links: z.array(z.union([z.string(), z.object({ url: z.unknown(), learningMode: z.boolean().optional() }).strict()])) }).strict(),
]);

const LinkId = z.uuid();

/** GET /links/:id shows at most this many attempts, the most recent, oldest first. */
export const MAX_ATTEMPTS_SHOWN = 50;

interface Item {
  input: unknown;
  learningMode?: boolean;
}

/** Summarise an attempt's heuristics as `type → value` (several values of one type joined with a comma). */
export function summariseHeuristics(rows: ReadonlyArray<{ heuristicType: string; heuristicValue: string }>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of rows) out[r.heuristicType] = out[r.heuristicType] === undefined ? r.heuristicValue : `${out[r.heuristicType]},${r.heuristicValue}`;
  return out;
}

/** POST /links (enqueue a batch) and GET /links/:id (status, attempts, decision). */
export function registerLinkRoutes(app: FastifyInstance, deps: LinksRouteDeps): void {
  const linkStore = new LinkStore(deps.prisma);
  app.post('/links', async (req, reply) => {
    const parsed = PostBody.safeParse(req.body);
    if (!parsed.success) {
      return sendInvalidBody(reply, 'expected {"urls": ["https://…"], "learningMode"?: boolean} or {"links": [{"url": "https://…", "learningMode"?: boolean}]}', parsed.error);
    }
    const body = parsed.data;
    const items: Item[] =
      'urls' in body
        ? body.urls.map((input) => ({ input, learningMode: body.learningMode }))
        : body.links.map((l) => (typeof l === 'string' ? { input: l } : { input: l.url, learningMode: l.learningMode }));
    if (items.length === 0) return reply.code(400).send({ error: 'empty_batch', message: 'no links given' });
    if (items.length > deps.maxBatchSize) {
      return reply.code(413).send({ error: 'batch_too_large', message: `at most ${deps.maxBatchSize} links per request (got ${items.length})` });
    }

    // Results come back in input order: each one is tagged with its position, whatever group it went in.
    const rejectedAt: Array<[number, RejectedLink]> = [];
    // One enqueue per learning flag: the flag is stored per link, and enqueueLinks takes one for its batch.
    const groups = new Map<boolean | undefined, { urls: string[]; at: number[] }>();
    items.forEach((item, at) => {
      if (typeof item.input !== 'string') {
        rejectedAt.push([at, { input: JSON.stringify(item.input) ?? String(item.input), code: 'invalid_url', message: 'expected the URL as a string' }]);
        return;
      }
      const group = groups.get(item.learningMode) ?? { urls: [], at: [] };
      group.urls.push(item.input);
      group.at.push(at);
      groups.set(item.learningMode, group);
    });
    const acceptedAt: Array<[number, AcceptedLink]> = [];
    for (const [learningModeEnabled, group] of groups) {
      const result = await enqueueLinks(group.urls, { links: deps.links, queues: deps.queues, learningModeEnabled });
      // enqueueLinks answers every input once, accepted or rejected, each list in input order.
      let a = 0;
      let r = 0;
      group.urls.forEach((input, k) => {
        if (r < result.rejected.length && result.rejected[r]!.input === input) rejectedAt.push([group.at[k]!, result.rejected[r++]!]);
        else if (a < result.accepted.length && result.accepted[a]!.input === input) acceptedAt.push([group.at[k]!, result.accepted[a++]!]);
      });
    }
    const inOrder = <T>(tagged: Array<[number, T]>): T[] => tagged.sort((x, y) => x[0] - y[0]).map(([, v]) => v);
    const accepted = inOrder(acceptedAt);
    const rejected = inOrder(rejectedAt);
    deps.linksCounter.inc({ outcome: 'accepted' }, accepted.length);
    deps.linksCounter.inc({ outcome: 'rejected' }, rejected.length);
    return reply.code(accepted.length > 0 ? 202 : 422).send({
      accepted: accepted.map((a) => ({ input: a.input, url: a.url, id: a.linkId, created: a.created, queued: a.queued })),
      rejected,
    });
  });

  app.get<{ Params: { id: string } }>('/links/:id', async (req, reply) => {
    const id = LinkId.safeParse(req.params.id);
    if (!id.success) return reply.code(400).send({ error: 'invalid_id', message: `link ids are UUIDs (got ${JSON.stringify(req.params.id)})` });
    // The latest attempts only: a link retried for weeks must not turn one GET into megabytes.
    const link = await linkStore.detail(id.data, MAX_ATTEMPTS_SHOWN);
    if (!link) return reply.code(404).send({ error: 'not_found', message: `no link ${id.data}` });
    return {
      id: link.id,
      url: link.url,
      initialUrl: link.initialUrl,
      domain: link.domain,
      status: link.status,
      pausedUntil: link.pausedUntil?.toISOString() ?? null,
      riskLevel: link.riskLevel,
      attemptCount: link.attemptCount,
      learningModeEnabled: link.learningModeEnabled,
      lastErrorType: link.lastErrorType,
      lastError: link.lastError,
      decision: { fetcher: link.fetcher, selectionSource: link.selectionSource },
      attemptsShown: link.attempts.length,
      attempts: [...link.attempts].reverse().map((a) => ({
        id: a.id.toString(),
        fetcher: a.fetcher,
        success: a.success,
        isBanned: a.isBanned,
        errorType: a.errorType,
        httpStatus: a.httpStatus,
        durationMs: a.durationMs,
        attemptedAt: a.attemptedAt.toISOString(),
        selectionSource: a.selectionSource,
        heuristics: summariseHeuristics(a.heuristics),
      })),
      createdAt: link.createdAt.toISOString(),
      updatedAt: link.updatedAt.toISOString(),
    };
  });
}
