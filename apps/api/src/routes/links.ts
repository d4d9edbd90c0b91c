import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DEFAULT_TRACKING_PARAMS, LINK_STATUSES, ScheduleInputError, checkMaxAgeSeconds, checkRevisitPolicy, compileTrackingParams, domainOf, normalizeUrl, stripTrackingParams, type RevisitPolicy, type RevisitPolicyInput } from '@crawler/core';
import { LinkStore, ScheduleStore, listLinks, type PrismaClient } from '@crawler/db';
import { MAX_JOB_PRIORITY, PrioritySchema } from '@crawler/queue';
import { enqueueLinks, nextStepOf, shownInput, type AcceptedLink, type LinkRepo, type RejectedLink } from '@crawler/pipeline';
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
  /** Refreshes and revisit policies. @defaultValue a ScheduleStore over `prisma` */
  schedule?: ScheduleStore;
  /** Shortest revisit interval a request may ask for, seconds (REVISIT_MIN_INTERVAL_S). @defaultValue 60 */
  minRevisitIntervalSeconds?: number;
  /** Query parameters a posted URL loses before it becomes a link (CRAWL_TRACKING_PARAMS). @defaultValue core's DEFAULT_TRACKING_PARAMS */
  trackingParams?: readonly string[];
}

// Items are `unknown` on purpose: one bad entry is a per-URL error in the response, not a 400 for the batch.
// maxAgeSeconds and revisit are checked after parsing, so a bad one is a 400 that names its field.
// BullMQ's priority: 1 runs first among prioritized jobs; links without one run before any prioritized link.
const batchOptions = { maxAgeSeconds: z.unknown().optional(), revisit: z.unknown().optional(), priority: PrioritySchema };
const PostBody = z.union([
  z.object({ urls: z.array(z.unknown()), learningMode: z.boolean().optional(), ...batchOptions }).strict(),
  z.object({
    links: z.array(z.union([z.string(), z.object({ url: z.unknown(), learningMode: z.boolean().optional(), maxAgeSeconds: z.unknown().optional(), priority: PrioritySchema }).strict()])),
    ...batchOptions,
  }).strict(),
]);

/**
 * A domain filter as links store their domain (core `domainOf`): a host as the user writes it — `www.`, upper case,
 * an IDN, a trailing dot — finds the links of that host.
 */
export const DomainFilter = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .transform((d, ctx) => {
    try {
      return domainOf(d);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'expected a domain name', input: d });
      return z.NEVER;
    }
  });

/** GET /links: filters, page size and cursor, validated. */
const ListQuery = z
  .object({
    status: z.enum(Object.values(LINK_STATUSES) as [string, ...string[]]).optional(),
    domain: DomainFilter.optional(),
    url: z.string().min(1).max(8192).optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    cursor: z.string().max(200).optional(),
  })
  .strict();

/** A page cursor: where the previous page ended, as (created_at, id), opaque to clients. */
function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(`${createdAt.toISOString()}_${id}`).toString('base64url');
}
function decodeCursor(cursor: string): { createdAt: Date; id: string } | null {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('_');
  const createdAt = new Date(at ?? '');
  return Number.isNaN(createdAt.getTime()) || !LinkId.safeParse(id).success ? null : { createdAt, id: id! };
}

const LinkId = z.uuid();

/** GET /links/:id shows at most this many attempts, the most recent, oldest first. */
export const MAX_ATTEMPTS_SHOWN = 50;

interface Item {
  input: unknown;
  learningMode?: boolean;
  maxAgeSeconds?: number;
  priority?: number;
}

/** Summarise an attempt's heuristics as `type → value` (several values of one type joined with a comma). */
export function summariseHeuristics(rows: ReadonlyArray<{ heuristicType: string; heuristicValue: string }>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of rows) out[r.heuristicType] = out[r.heuristicType] === undefined ? r.heuristicValue : `${out[r.heuristicType]},${r.heuristicValue}`;
  return out;
}

/** POST /links (enqueue a batch) and GET /links/:id (status, attempts, decision). */
export function registerLinkRoutes(app: FastifyInstance, deps: LinksRouteDeps): void {
  const tracking = compileTrackingParams(deps.trackingParams ?? DEFAULT_TRACKING_PARAMS);
  const linkStore = new LinkStore(deps.prisma);
  app.post('/links', async (req, reply) => {
    const parsed = PostBody.safeParse(req.body);
    if (!parsed.success) {
      return sendInvalidBody(
        reply,
        `expected {"urls": ["https://…"], "learningMode"?: boolean, "maxAgeSeconds"?: number, "revisit"?: {…}, "priority"?: 1…${MAX_JOB_PRIORITY}} or {"links": [{"url": "https://…", "learningMode"?: boolean, "maxAgeSeconds"?: number, "priority"?: 1…${MAX_JOB_PRIORITY}}], "maxAgeSeconds"?: number, "revisit"?: {…}, "priority"?: 1…${MAX_JOB_PRIORITY}}`,
        parsed.error,
      );
    }
    const body = parsed.data;
    let batchMaxAge: number | undefined;
    let revisit: RevisitPolicy | null | undefined;
    let items: Item[];
    try {
      batchMaxAge = body.maxAgeSeconds === undefined ? undefined : checkMaxAgeSeconds(body.maxAgeSeconds);
      if (body.revisit === null) revisit = null;
      else if (body.revisit !== undefined) {
        if (typeof body.revisit !== 'object' || Array.isArray(body.revisit)) throw new ScheduleInputError('revisit', 'revisit must be an object: {"mode": "fixed", "intervalSeconds": N} or {"mode": "adaptive", "minSeconds": N, "maxSeconds": N}');
        revisit = checkRevisitPolicy(body.revisit as RevisitPolicyInput, deps.minRevisitIntervalSeconds ?? 60);
      }
      items =
        'urls' in body
          ? body.urls.map((input) => ({ input, learningMode: body.learningMode, maxAgeSeconds: batchMaxAge, priority: body.priority }))
          : body.links.map((l, i) =>
              typeof l === 'string'
                ? { input: l, maxAgeSeconds: batchMaxAge, priority: body.priority }
                : {
                    input: l.url,
                    learningMode: l.learningMode,
                    maxAgeSeconds: l.maxAgeSeconds === undefined ? batchMaxAge : checkMaxAgeSeconds(l.maxAgeSeconds, `links.${i}.maxAgeSeconds`),
                    priority: l.priority ?? body.priority,
                  },
            );
    } catch (err) {
      if (err instanceof ScheduleInputError) return reply.code(400).send({ error: 'invalid_field', field: err.field, message: err.message });
      throw err;
    }
    if (items.length === 0) return reply.code(400).send({ error: 'empty_batch', message: 'no links given' });
    if (items.length > deps.maxBatchSize) {
      return reply.code(413).send({ error: 'batch_too_large', message: `at most ${deps.maxBatchSize} links per request (got ${items.length}): split the batch` });
    }

    // Results come back in input order: each one is tagged with its position, whatever group it went in.
    const rejectedAt: Array<[number, RejectedLink]> = [];
    // One enqueue per learning flag and priority: enqueueLinks takes one of each for its batch.
    const groups = new Map<string, { learningModeEnabled?: boolean; priority?: number; urls: string[]; at: number[]; maxAges: Array<number | undefined> }>();
    items.forEach((item, at) => {
      if (typeof item.input !== 'string') {
        rejectedAt.push([at, { input: quoteInput(item.input), code: 'invalid_url', message: 'expected the URL as a string' }]);
        return;
      }
      const key = `${item.learningMode}/${item.priority}`;
      const group = groups.get(key) ?? { learningModeEnabled: item.learningMode, priority: item.priority, urls: [], at: [], maxAges: [] };
      group.urls.push(item.input);
      group.at.push(at);
      group.maxAges.push(item.maxAgeSeconds);
      groups.set(key, group);
    });
    const acceptedAt: Array<[number, AcceptedLink]> = [];
    let deferred: { reason: string } | undefined;
    const schedule = deps.schedule ?? new ScheduleStore({ prisma: deps.prisma });
    for (const group of groups.values()) {
      const result = await enqueueLinks(group.urls, {
        links: deps.links, queues: deps.queues, learningModeEnabled: group.learningModeEnabled, priority: group.priority, schedule, revisit,
        maxAgeSeconds: group.maxAges.some((a) => a !== undefined) ? group.maxAges : undefined,
        ...(deps.trackingParams ? { trackingParams: deps.trackingParams } : {}),
      });
      deferred ??= result.deferred;
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
    // Stored, their jobs left to the reconciler: the producer need not send them again (that would only wait again).
    if (deferred) req.log.warn({ deferred: accepted.filter((a) => a.deferred).length, reason: deferred.reason }, 'links stored; Redis cannot take their jobs now, the reconciler adds them when it is back');
    return reply.code(accepted.length > 0 ? 202 : 422).send({
      accepted: accepted.map((a) => ({ input: a.input, url: a.url, id: a.linkId, created: a.created, queued: a.queued, ...(a.refresh ? { refresh: a.refresh } : {}), ...(a.deferred ? { deferred: true } : {}) })),
      // As sent, but never a multi-megabyte input back (the matching above needed the inputs whole).
      rejected: rejected.map((r) => ({ ...r, input: shownInput(r.input) })),
      ...(deferred ? { deferred: { message: 'stored; Redis cannot take their jobs now (the links marked deferred), and the reconciler adds them when it is back: do not send them again', reason: deferred.reason } } : {}),
    });
  });

  app.get('/links', async (req, reply) => {
    const parsed = ListQuery.safeParse(req.query);
    if (!parsed.success) {
      return reply.code(400).send({
        error: 'invalid_query',
        message: `expected ?status=${Object.values(LINK_STATUSES).join('|')}&domain=HOST&url=URL&limit=1…1000&cursor=…`,
        issues: parsed.error.issues.slice(0, 5).map((i) => ({ path: i.path.join('.'), message: i.message })),
      });
    }
    const q = parsed.data;
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    if (after === null) return reply.code(400).send({ error: 'invalid_cursor', message: 'cursor is not one this API handed out (use nextCursor as given)' });
    let url: string[] | undefined;
    try {
      // The link a posted URL became (tracking parameters stripped), or one stored with them before they were.
      const normalized = q.url === undefined ? undefined : normalizeUrl(q.url);
      url = normalized === undefined ? undefined : [...new Set([stripTrackingParams(normalized, tracking), normalized])];
    } catch {
      return reply.code(400).send({ error: 'invalid_url', message: `not a URL that can be stored: ${JSON.stringify(q.url)}` });
    }
    const page = await listLinks(deps.prisma, { status: q.status, domain: q.domain, url, limit: q.limit, after });
    const last = page.links.at(-1);
    return {
      links: page.links.map((l) => ({ ...l, pausedUntil: l.pausedUntil?.toISOString() ?? null, createdAt: l.createdAt.toISOString(), updatedAt: l.updatedAt.toISOString() })),
      nextCursor: page.more && last ? encodeCursor(last.createdAt, last.id) : null,
    };
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
      // What the fleet does with it next: retried when, by whom, or nothing more (and whether a re-post changes that).
      next: nextOf(link),
      // What the latest successful visit found: null on a first visit, true a new version, false unchanged.
      lastVisitChanged: link.lastVisitChanged,
      decision: { fetcher: link.fetcher, selectionSource: link.selectionSource },
      generation: link.generation,
      revisit: link.revisitMode
        ? {
            mode: link.revisitMode, intervalSeconds: link.revisitIntervalS, minSeconds: link.revisitMinS, maxSeconds: link.revisitMaxS,
            nextIntervalSeconds: link.revisitNextS, nextFetchAt: link.nextFetchAt?.toISOString() ?? null, lastVisitChanged: link.lastVisitChanged,
          }
        : null,
      attemptsShown: link.attempts.length,
      attempts: [...link.attempts].reverse().map((a) => ({
        id: a.id.toString(),
        fetcher: a.fetcher,
        // `direct` or a PROXY_TIERS name: the exit, never the proxy URL (it may carry credentials).
        exitTier: a.exitTier,
        success: a.success,
        isBanned: a.isBanned,
        errorType: a.errorType,
        // Why, in words, when the attempt got no response (`UND_ERR_SOCKET: other side closed (18 of 5000 body bytes received)`).
        errorMessage: a.errorMessage,
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

/**
 * A link that is not a string, as a rejection quotes it: its JSON, at most 200 characters. A value too deep to
 * serialise (an array nested 5,000 times) is named by its type instead of overflowing the stack.
 */
function quoteInput(input: unknown): string {
  let quoted: string;
  try {
    quoted = JSON.stringify(input) ?? String(input);
  } catch {
    quoted = Array.isArray(input) ? 'an array nested too deep to quote' : typeof input;
  }
  return quoted.length > 200 ? `${quoted.slice(0, 200)}…` : quoted;
}

/** The link's next step as JSON (`at` an ISO time or null). */
function nextOf(link: { status: string; pausedUntil: Date | null; lastErrorType: string | null; nextFetchAt: Date | null }) {
  const next = nextStepOf(link, new Date());
  return { action: next.action, at: next.at?.toISOString() ?? null, message: next.message };
}
