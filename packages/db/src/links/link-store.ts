import { LINK_STATUSES, type LinkStatus } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { sqlOf, type SqlClient } from '../sql.js';
import { WriteBatcher, type WriteBatcherOptions } from '../write-batcher.js';
import { reviveFailedLinks } from './link-query.js';
import { FINISHED_SQL_LIST, FINISHED_STATUSES, IN_FLIGHT_SQL_LIST, IN_PROGRESS_SQL_LIST, IN_PROGRESS_STATUSES, sqlList } from '../sql-lists.js';

/** The link fields the pipeline reads. */
export interface LinkRecord {
  id: string;
  url: string;
  initialUrl: string;
  domain: string;
  status: string;
  pausedUntil: Date | null;
  riskLevel: number;
  attemptCount: number;
  lastAttemptAt: Date | null;
  learningModeEnabled: boolean | null;
  fetcher: string | null;
  selectionSource: string | null;
  lastErrorType: string | null;
  lastError: string | null;
  /** The link-following crawl that admitted it (null or absent: a producer's link). */
  crawlId?: string | null;
  /** Links followed from the crawl's seed to reach it. */
  depth?: number | null;
  /** The route job generation that owns the link: jobs of an older one are stale and skipped. */
  generation: number;
}

/** The link fields a crawl's report shows. */
export interface LinkSummary {
  url: string;
  status: string;
  fetcher: string | null;
  selectionSource: string | null;
  attemptCount: number;
  lastErrorType: string | null;
  /** Why, in words: the error's message for a failed or paused link (e.g. `max_attempts:network_error: …`). */
  lastError: string | null;
  pausedUntil: Date | null;
}

/** A status of a link not finished yet. */
export type BacklogStatus = (typeof IN_PROGRESS_STATUSES)[number];

/** The unfinished links: how many, by status, and the domains holding most of them (`crawl stats`). */
export interface LinkBacklog {
  /** Links queued, routing, fetching or paused. */
  total: number;
  /** Each unfinished status with its count (0 when none). */
  byStatus: Record<BacklogStatus, number>;
  /** The domains with the most unfinished links, most first, with their count per status. */
  topDomains: Array<{ domain: string; total: number } & Record<BacklogStatus, number>>;
}

/** One unfinished link as the reconciler reads it. */
export interface StaleLink {
  id: string;
  url: string;
  status: string;
  pausedUntil: Date | null;
  attemptCount: number;
  fetcher: string | null;
  generation: number;
  rescues: number;
  lastErrorType: string | null;
  updatedAt: Date;
  /** The producer's BullMQ priority, carried on to the rebuilt job (null: none). */
  priority: number | null;
}

/** A new link to store. */
export interface NewLink {
  url: string;
  initialUrl: string;
  domain: string;
  learningModeEnabled?: boolean | null;
  /** BullMQ priority of the link's jobs (1 first); kept on the link so a rebuilt job keeps it. */
  priority?: number | null;
}

/**
 * The one type for a change to a link (the router's, the fetch outcome's, the reconciler's); undefined fields are
 * left alone, null clears a column.
 */
export interface LinkChange {
  status?: LinkStatus;
  pausedUntil?: Date | null;
  riskLevel?: number;
  fetcher?: string | null;
  selectionSource?: string | null;
  lastErrorType?: string | null;
  lastError?: string | null;
  /** The route job generation that owns the link from now on (see the reconciler). */
  generation?: number;
  /**
   * Attempts made since the link was last written: attempt_count += attemptsMade (with lastAttemptAt). Not part of
   * an outcome write, which counts the attempts it logs itself.
   */
  attemptsMade?: number;
  lastAttemptAt?: Date;
}

const UPSERT_CHUNK = 1_000;

/**
 * The `links` table: every statement that reads or writes it outside a fetch outcome ({@link OutcomeStore}) and a
 * crawl's admission ({@link CrawlStore}) is a named method here.
 */
export class LinkStore {
  private readonly sql: SqlClient;
  private readonly batcher: WriteBatcher<{ id: string; patch: LinkChange }, boolean> | null;
  private readonly reads: WriteBatcher<string, LinkRecord | null> | null;

  /**
   * `batch`: {@link updateUnlessFinished} writes behind, in batches (one statement per batch and shape of change;
   * each call still resolves only once its change committed). Off without it: one statement per call.
   * `readBatch`: {@link get} and {@link readRoutable} calls that arrive together (the router's and the fetch workers'
   * one read per job) share one `WHERE id = ANY(…)` statement, sent as soon as no other batch of reads is under way
   * (`maxWaitMs` 0 by default: a read never waits for company, only for the statement before it). Each call still
   * reads the link as committed when its statement runs, after the call was made.
   */
  constructor(private readonly prisma: PrismaClient, opts: { batch?: WriteBatcherOptions; readBatch?: WriteBatcherOptions } = {}) {
    this.sql = sqlOf(prisma);
    this.batcher = opts.batch && (opts.batch.maxBatch ?? 32) > 1
      ? new WriteBatcher({ one: (w) => this.updateOneUnlessFinished(w.id, w.patch), many: (ws) => this.updateManyUnlessFinished(ws), key: (w) => w.id }, opts.batch)
      : null;
    this.reads = opts.readBatch && (opts.readBatch.maxBatch ?? 32) > 1
      ? new WriteBatcher<string, LinkRecord | null>({ one: (id) => this.getOne(id), many: (ids) => this.getMany(ids), key: (id) => id }, { maxWaitMs: 0, maxInFlight: 1, ...opts.readBatch })
      : null;
  }

  async upsertMany(links: NewLink[]): Promise<Array<LinkRecord & { created: boolean }>> {
    // Bounded statements: a million-URL file goes in chunks.
    if (links.length > UPSERT_CHUNK) {
      const out: Array<LinkRecord & { created: boolean }> = [];
      for (let i = 0; i < links.length; i += UPSERT_CHUNK) out.push(...(await this.upsertMany(links.slice(i, i + UPSERT_CHUNK))));
      return out;
    }
    if (links.length === 0) return [];
    // One statement: the new links are inserted (a concurrent insert of the same url is a no-op) and returned as
    // created; the ones that already existed are read from the statement's snapshot.
    const rows = await this.sql.query<LinkRecord & { created: boolean }>(UPSERT_SQL, [
      links.map((l) => l.url),
      links.map((l) => l.initialUrl),
      links.map((l) => l.domain),
      links.map((l) => l.learningModeEnabled ?? null),
      links.map((l) => l.priority ?? null),
    ]);
    const byUrl = new Map(rows.map((r) => [r.url, r]));
    // A link another producer inserted after this statement's snapshot is in neither half: read it now.
    const late = links.filter((l) => !byUrl.has(l.url)).map((l) => l.url);
    if (late.length > 0) {
      for (const r of await this.sql.query<LinkRecord>(`SELECT ${COLUMNS} FROM links WHERE url = ANY($1::text[])`, [late])) byUrl.set(r.url, { ...r, created: false });
    }
    return links.flatMap((l) => {
      const row = byUrl.get(l.url);
      return row ? [row] : [];
    });
  }

  /** Which of `urls` are stored links' urls (one indexed lookup on the unique url). */
  async existingUrls(urls: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < urls.length; i += UPSERT_CHUNK) {
      const rows = await this.sql.query<{ url: string }>(`SELECT url FROM links WHERE url = ANY($1::text[])`, [urls.slice(i, i + UPSERT_CHUNK)]);
      out.push(...rows.map((r) => r.url));
    }
    return out;
  }

  /** The status of each of `urls` that is a stored link's url (one indexed lookup on the unique url). */
  async statusesByUrl(urls: readonly string[]): Promise<Map<string, LinkStatus>> {
    const out = new Map<string, LinkStatus>();
    for (let i = 0; i < urls.length; i += UPSERT_CHUNK) {
      const rows = await this.sql.query<{ url: string; status: LinkStatus }>(`SELECT url, status FROM links WHERE url = ANY($1::text[])`, [urls.slice(i, i + UPSERT_CHUNK)]);
      for (const r of rows) out.set(r.url, r.status);
    }
    return out;
  }

  /**
   * Links handed to a fetcher whose fetch has not started, when the last process serving that fetcher stops: they
   * wait, as a queued link does, and read `queued` (their fetch jobs still carry them). A link that moved on (done,
   * failed, paused) is left alone. How many changed.
   */
  async returnToQueued(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const rows = await this.sql.query<{ id: string }>(
      `UPDATE links SET status = '${LINK_STATUSES.queued}', updated_at = now() WHERE id = ANY($1::uuid[]) AND status = '${LINK_STATUSES.fetching}' RETURNING id`,
      [ids],
    );
    return rows.length;
  }

  async get(id: string): Promise<LinkRecord | null> {
    return this.reads ? this.reads.write(id) : this.getOne(id);
  }

  private async getOne(id: string): Promise<LinkRecord | null> {
    const [row] = await this.sql.query<LinkRecord>(`SELECT ${COLUMNS} FROM links WHERE id = $1::uuid`, [id]);
    return row ?? null;
  }

  /** Many links by id (distinct), in one statement; an id that is not a uuid fails alone (the rest are read one by one). */
  private async getMany(ids: readonly string[]): Promise<PromiseSettledResult<LinkRecord | null>[]> {
    try {
      const rows = await this.sql.query<LinkRecord>(`SELECT ${COLUMNS} FROM links WHERE id = ANY($1::uuid[])`, [ids]);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => ({ status: 'fulfilled', value: byId.get(id.toLowerCase()) ?? null }));
    } catch {
      return Promise.allSettled(ids.map((id) => this.getOne(id)));
    }
  }

  async update(id: string, patch: LinkChange): Promise<void> {
    const { set, params } = setClause(patch, 2);
    await this.sql.query(`UPDATE links SET ${set} WHERE id = $1::uuid`, [id, ...params]);
  }

  /** Apply `patch` only while the link is not done or failed; false when it already was (a concurrent job finished it). */
  async updateUnlessFinished(id: string, patch: LinkChange): Promise<boolean> {
    return this.batcher ? this.batcher.write({ id, patch }) : this.updateOneUnlessFinished(id, patch);
  }

  private async updateOneUnlessFinished(id: string, patch: LinkChange): Promise<boolean> {
    const { set, params } = setClause(patch, 2);
    const rows = await this.sql.query(`UPDATE links SET ${set} WHERE id = $1::uuid AND status NOT IN (${FINISHED_SQL_LIST}) RETURNING 1`, [id, ...params]);
    return rows.length > 0;
  }

  /**
   * {@link updateUnlessFinished} for many links (distinct ids) at once: one multi-row `UPDATE` per shape of change
   * (the set of fields it names), rows locked in id order. A statement that fails is retried change by change, so
   * only the change at fault fails.
   */
  async updateManyUnlessFinished(changes: readonly { id: string; patch: LinkChange }[]): Promise<PromiseSettledResult<boolean>[]> {
    const results: PromiseSettledResult<boolean>[] = new Array(changes.length);
    const one = async (i: number): Promise<void> => {
      try {
        results[i] = { status: 'fulfilled', value: await this.updateOneUnlessFinished(changes[i]!.id, changes[i]!.patch) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    };
    const shapes = new Map<string, number[]>();
    for (const [i, c] of changes.entries()) {
      const shape = patchShape(c.patch).join(',');
      shapes.set(shape, [...(shapes.get(shape) ?? []), i]);
    }
    for (const [shape, idx] of shapes) {
      if (idx.length === 1 || new Set(idx.map((i) => changes[i]!.id)).size !== idx.length) {
        for (const i of idx) await one(i);
        continue;
      }
      const keys = shape === '' ? [] : (shape.split(',') as (keyof LinkChange)[]);
      const rows = idx.map((i) => {
        const c = changes[i]!;
        const row: Record<string, unknown> = { id: c.id };
        for (const k of keys) row[PATCH_TYPES[k][0]] = c.patch[k];
        return row;
      });
      try {
        const updated = await this.sql.query<{ id: string }>(batchUpdateSql(keys), [JSON.stringify(rows)]);
        const ids = new Set(updated.map((r) => r.id));
        for (const i of idx) results[i] = { status: 'fulfilled', value: ids.has(changes[i]!.id) };
      } catch {
        for (const i of idx) await one(i);
      }
    }
    return results;
  }

  /** Count `n` attempts made now: attempt_count += n, last_attempt_at = at. */
  async countAttempts(id: string, n: number, at: Date): Promise<void> {
    await this.update(id, { attemptsMade: n, lastAttemptAt: at });
  }

  /**
   * The link, when a route job of `generation` may route it now: unfinished, not paused at `now` and not owned by a
   * newer generation; null otherwise (missing, finished, paused or stale: read it with `get`). A read, not a claim:
   * the router's one write is its decision (status `fetching`, guarded by updateUnlessFinished; an inline fetch's
   * outcome carries it instead), and `routing` is written only while a probe is under way.
   */
  async readRoutable(id: string, now: Date, generation: number): Promise<LinkRecord | null> {
    if (this.reads) {
      // READ_ROUTABLE_SQL's conditions, on the row a batched read returned.
      const row = await this.reads.write(id);
      const routable = row !== null && !FINISHED_STATUSES.includes(row.status as LinkStatus) &&
        (row.pausedUntil === null || row.pausedUntil.getTime() <= now.getTime()) && row.generation <= generation;
      return routable ? row : null;
    }
    const [row] = await this.sql.query<LinkRecord>(READ_ROUTABLE_SQL, [id, now, generation]);
    return row ?? null;
  }

  /** True while any link is queued, routing or fetching (one index probe: the partial index on unfinished links). */
  async anyInFlight(): Promise<boolean> {
    const [row] = await this.sql.query<{ n: number }>(IN_FLIGHT_SQL);
    return (row?.n ?? 0) > 0;
  }

  /**
   * Back to `queued`, in a new generation, the links of `ids` that are failed with one of `errorTypes` (an outage, not
   * the page), storing `priority` as theirs when given; returns those revived, with their priority.
   */
  reviveFailed(ids: readonly string[], errorTypes: readonly string[], priority?: number | null): Promise<Array<{ id: string; url: string; generation: number; priority?: number | null }>> {
    return reviveFailedLinks(this.prisma, ids, errorTypes, priority);
  }

  /**
   * The links not finished yet, counted by status and, for the `limit` domains holding most of them, by domain: what
   * the fleet still has to do and which sites it is waiting on. Reads the partial index on unfinished links, so it costs
   * the backlog, not the table's finished history.
   */
  async backlog(limit: number): Promise<LinkBacklog> {
    const statusRows = await this.sql.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM links WHERE status IN (${IN_PROGRESS_SQL_LIST}) GROUP BY status`,
    );
    const byStatus = Object.fromEntries(IN_PROGRESS_STATUSES.map((s) => [s, 0])) as Record<BacklogStatus, number>;
    for (const r of statusRows) byStatus[r.status as BacklogStatus] = Number(r.n);
    const domainRows = await this.sql.query<Record<BacklogStatus | 'total', number> & { domain: string }>(
      `SELECT domain, count(*)::int AS total, ${IN_PROGRESS_STATUSES.map((s) => `count(*) FILTER (WHERE status = '${s}')::int AS ${s}`).join(', ')}
       FROM links WHERE status IN (${IN_PROGRESS_SQL_LIST})
       GROUP BY domain ORDER BY total DESC, domain LIMIT $1`,
      [limit],
    );
    const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
    return {
      total,
      byStatus,
      topDomains: domainRows.map((r) => ({ domain: r.domain, total: Number(r.total), ...(Object.fromEntries(IN_PROGRESS_STATUSES.map((s) => [s, Number(r[s])])) as Record<BacklogStatus, number>) })),
    };
  }

  /** The id of the link stored under a normalized url, or null. */
  async idByUrl(url: string): Promise<string | null> {
    const [row] = await this.sql.query<{ id: string }>('SELECT id::text AS id FROM links WHERE url = $1', [url]);
    return row?.id ?? null;
  }

  /**
   * The summary rows of `ids`, in that order (ids with no row left out). Plain SQL, in chunks: a crawl that used no
   * Prisma query until its report does not load Prisma's query compiler just to print it (~0.3 s of a short crawl).
   */
  async summaries(ids: readonly string[]): Promise<LinkSummary[]> {
    const byId = new Map<string, LinkSummary>();
    for (let i = 0; i < ids.length; i += SUMMARY_CHUNK) {
      const rows = await this.sql.query<LinkSummary & { id: string }>(`SELECT id::text AS id, ${SUMMARY_COLUMNS} FROM links WHERE id = ANY($1::uuid[])`, [ids.slice(i, i + SUMMARY_CHUNK)]);
      for (const r of rows) byId.set(r.id, r);
    }
    return ids.flatMap((id) => {
      const r = byId.get(id);
      return r ? [r] : [];
    });
  }

  /** The summary rows of a link-following crawl's links, by depth and then admission order. */
  crawlSummaries(crawlId: string): Promise<LinkSummary[]> {
    return this.sql.query<LinkSummary>(`SELECT ${SUMMARY_COLUMNS} FROM links WHERE crawl = $1::uuid ORDER BY depth ASC, created_at ASC`, [crawlId]);
  }

  /** How many of `ids` are settled for a progress bar (done, failed or paused). */
  async countSettled(ids: readonly string[]): Promise<number> {
    const [row] = await this.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM links WHERE id = ANY($1::uuid[]) AND status IN (${SETTLED_SQL_LIST})`, [ids]);
    return row?.n ?? 0;
  }

  /** The links `ids` with all their attempts (oldest first), for the demo's table. */
  withAttempts(ids: readonly string[]) {
    return this.prisma.link.findMany({ where: { id: { in: [...ids] } }, include: { attempts: { orderBy: { id: 'asc' } } } });
  }

  /** One link with its latest `maxAttempts` attempts (newest first) and their heuristics, or null. */
  detail(id: string, maxAttempts: number) {
    return this.prisma.link.findUnique({
      where: { id },
      include: { attempts: { orderBy: { id: 'desc' }, take: maxAttempts, include: { heuristics: { select: { heuristicType: true, heuristicValue: true }, orderBy: { id: 'asc' } } } } },
    });
  }

  /**
   * Unfinished links of `status` last written before `cutoff`, after the keyset cursor `after` (updated_at, id), in
   * that order: the reconciler's scan.
   */
  staleUnfinished(status: LinkStatus, cutoff: Date, after: { updatedAt: Date; id: string }, limit: number): Promise<StaleLink[]> {
    return this.sql.query<StaleLink>(SCAN_STALE_SQL, [status, cutoff, after.updatedAt, after.id, limit]);
  }

  /** Fail an unfinished link of `generation` with `errorType`; false when it moved on meanwhile. */
  async failIfGeneration(id: string, generation: number, errorType: string, message: string): Promise<boolean> {
    const rows = await this.sql.query(FAIL_IF_GENERATION_SQL, [id, generation, errorType, message]);
    return rows.length > 0;
  }

  /**
   * Move an unfinished link of `generation` to the next generation (counting a rescue when its job died); its new
   * generation, or null when somebody moved it meanwhile (a job finished it, another reconciler bumped it).
   */
  async nextGeneration(id: string, generation: number, rescued: boolean): Promise<number | null> {
    const [row] = await this.sql.query<{ generation: number }>(NEXT_GENERATION_SQL, [id, generation, rescued ? 1 : 0]);
    return row?.generation ?? null;
  }
}

// The hot path's statements in plain SQL (one or two per job, every job): @crawler/db sqlOf explains why.
const COLUMNS = [
  'id', 'url', 'initial_url AS "initialUrl"', 'domain', 'status', 'paused_until AS "pausedUntil"', 'risk_level AS "riskLevel"',
  'attempt_count AS "attemptCount"', 'last_attempt_at AS "lastAttemptAt"', 'learning_mode_enabled AS "learningModeEnabled"',
  'fetcher', 'selection_source AS "selectionSource"', 'last_error_type AS "lastErrorType"', 'last_error AS "lastError"',
  'crawl AS "crawlId"', 'depth',
  'generation',
].join(', ');

/** readRoutable's statement ($1 id, $2 now, $3 the job's generation). */
export const READ_ROUTABLE_SQL = `SELECT ${COLUMNS} FROM links
WHERE id = $1::uuid AND status NOT IN (${FINISHED_SQL_LIST}) AND (paused_until IS NULL OR paused_until <= $2) AND generation <= $3`;

const IN_FLIGHT_SQL = `SELECT count(*)::int AS n FROM (SELECT 1 FROM links WHERE status IN (${IN_FLIGHT_SQL_LIST}) LIMIT 1) x`;

const SUMMARY_CHUNK = 10_000;
const SUMMARY_COLUMNS = `url, status, fetcher, selection_source AS "selectionSource", attempt_count AS "attemptCount",
  last_error_type AS "lastErrorType", last_error AS "lastError", paused_until AS "pausedUntil"`;
const SETTLED_SQL_LIST = sqlList([...FINISHED_STATUSES, LINK_STATUSES.paused]);

// Keyset pagination per status over idx_links_unfinished_updated (status, updated_at, id): each batch is an index range,
// also across links sharing an updated_at (one bulk insert). ORDER BY names the table's columns: a bare `id` is the
// output column `id::text`, whose order the index does not give (each page then read and sorted every tied link).
// The status list restates the index's predicate, so a generic plan (status = $1 proves nothing) can use it too.
export const SCAN_STALE_SQL = `
SELECT id::text, url, status, paused_until AS "pausedUntil", attempt_count AS "attemptCount", fetcher, generation, rescues,
  last_error_type AS "lastErrorType", updated_at AS "updatedAt", priority
FROM links
WHERE status = $1 AND status IN (${IN_PROGRESS_SQL_LIST}) AND updated_at < $2 AND (updated_at, id) > ($3::timestamptz, $4::uuid)
ORDER BY links.updated_at, links.id
LIMIT $5`;

const FAIL_IF_GENERATION_SQL = `
UPDATE links SET status = '${LINK_STATUSES.failed}', last_error_type = $3, last_error = $4, updated_at = now()
WHERE id = $1::uuid AND generation = $2 AND status NOT IN (${FINISHED_SQL_LIST})
RETURNING 1`;

const NEXT_GENERATION_SQL = `
UPDATE links SET generation = generation + 1, rescues = rescues + $3::int, updated_at = now()
WHERE id = $1::uuid AND generation = $2 AND status NOT IN (${FINISHED_SQL_LIST})
RETURNING generation`;

const UPSERT_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::int[]) AS t(url, initial_url, domain, learning_mode_enabled, priority)
), inserted AS (
  INSERT INTO links (url, initial_url, domain, learning_mode_enabled, priority, status)
  SELECT url, initial_url, domain, learning_mode_enabled, priority, '${LINK_STATUSES.queued}' FROM input
  ON CONFLICT (url) DO NOTHING
  RETURNING ${COLUMNS}
)
SELECT inserted.*, true AS created FROM inserted
UNION ALL
SELECT ${COLUMNS.split(', ').map((c) => `links.${c}`).join(', ')}, false AS created FROM links WHERE links.url IN (SELECT url FROM input)`;

const PATCH_COLUMNS: Record<Exclude<keyof LinkChange, 'attemptsMade'>, string> = {
  status: 'status',
  pausedUntil: 'paused_until',
  riskLevel: 'risk_level',
  fetcher: 'fetcher',
  selectionSource: 'selection_source',
  lastErrorType: 'last_error_type',
  lastError: 'last_error',
  lastAttemptAt: 'last_attempt_at',
  generation: 'generation',
};

/** Column and type of each field of a change, for {@link batchUpdateSql}. */
const PATCH_TYPES: Record<keyof LinkChange, [string, string]> = {
  status: ['status', 'text'],
  pausedUntil: ['paused_until', 'timestamptz'],
  riskLevel: ['risk_level', 'int'],
  fetcher: ['fetcher', 'text'],
  selectionSource: ['selection_source', 'text'],
  lastErrorType: ['last_error_type', 'text'],
  lastError: ['last_error', 'text'],
  lastAttemptAt: ['last_attempt_at', 'timestamptz'],
  generation: ['generation', 'int'],
  attemptsMade: ['attempts_made', 'int'],
};

/** The fields a change sets (attemptsMade only when non-zero, as setClause counts it), in a fixed order. */
function patchShape(patch: LinkChange): (keyof LinkChange)[] {
  return (Object.keys(PATCH_TYPES) as (keyof LinkChange)[]).filter((k) => (k === 'attemptsMade' ? !!patch.attemptsMade : patch[k] !== undefined));
}

/** One `UPDATE links … FROM jsonb_to_recordset($1)` for changes of one shape; returns the ids it updated. */
function batchUpdateSql(keys: readonly (keyof LinkChange)[]): string {
  const cols = keys.map((k) => PATCH_TYPES[k]);
  const set = cols.map(([c]) => (c === 'attempts_made' ? 'attempt_count = links.attempt_count + v.attempts_made' : `${c} = v.${c}`));
  return `UPDATE links SET ${[...set, 'updated_at = now()'].join(', ')}
FROM (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id uuid${cols.map(([c, t]) => `, ${c} ${t}`).join('')}) ORDER BY id) AS v
WHERE links.id = v.id AND links.status NOT IN (${FINISHED_SQL_LIST})
RETURNING links.id::text AS id`;
}

/** `col = $n, ...` for the defined fields of a patch (numbered from `first`), and updated_at as Prisma's @updatedAt. */
function setClause(patch: LinkChange, first: number): { set: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const [key, column] of Object.entries(PATCH_COLUMNS) as [keyof typeof PATCH_COLUMNS, string][]) {
    const value = patch[key];
    if (value === undefined) continue;
    params.push(value);
    parts.push(`${column} = $${first + params.length - 1}`);
  }
  if (patch.attemptsMade) {
    params.push(patch.attemptsMade);
    parts.push(`attempt_count = attempt_count + $${first + params.length - 1}::int`);
  }
  parts.push('updated_at = now()');
  return { set: parts.join(', '), params };
}
