import { reviveFailedLinks, sqlOf, type PrismaClient, type SqlClient } from '@crawler/db';
import type { LinkStatus } from '@crawler/core';

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

/** A new link to store. */
export interface NewLink {
  url: string;
  initialUrl: string;
  domain: string;
  learningModeEnabled?: boolean | null;
}

/** Changes the pipeline makes to a link; undefined fields are left alone. */
export interface LinkPatch {
  status?: LinkStatus;
  pausedUntil?: Date | null;
  riskLevel?: number;
  fetcher?: string | null;
  selectionSource?: string | null;
  lastErrorType?: string | null;
  lastError?: string | null;
  /** Attempts made since the link was last written: attempt_count += attemptsMade (with lastAttemptAt). */
  attemptsMade?: number;
  lastAttemptAt?: Date;
}

/** Links as the pipeline needs them: a small interface so processors can be tested with a stub. */
export interface LinkRepo {
  /** Insert the links that do not exist yet (by normalized url) and return every one, with whether it was new. */
  upsertMany(links: NewLink[]): Promise<Array<LinkRecord & { created: boolean }>>;
  get(id: string): Promise<LinkRecord | null>;
  update(id: string, patch: LinkPatch): Promise<void>;
  /** Apply `patch` only while the link is not done or failed; false when it already was (a concurrent job finished it). */
  updateUnlessFinished(id: string, patch: LinkPatch): Promise<boolean>;
  /** Count `n` attempts made now: attempt_count += n, last_attempt_at = at. */
  countAttempts(id: string, n: number, at: Date): Promise<void>;
  /**
   * The link, when a route job of `generation` may route it now: unfinished, not paused at `now` and not owned by a
   * newer generation; null otherwise (missing, finished, paused or stale: read it with `get`). A read, not a claim:
   * the router's one write is its decision (status `fetching`, guarded by updateUnlessFinished), and `routing` is
   * written only while a probe is under way.
   */
  readRoutable(id: string, now: Date, generation: number): Promise<LinkRecord | null>;
  /**
   * Back to `queued`, in a new generation, the links of `ids` that are failed with one of `errorTypes`; returns those
   * revived. Optional: without it, a re-posted failed link stays failed.
   */
  reviveFailed?(ids: readonly string[], errorTypes: readonly string[]): Promise<Array<{ id: string; url: string; generation: number }>>;
}

const UPSERT_CHUNK = 1_000;

/** LinkRepo over the generated Prisma client. */
export class PrismaLinkRepo implements LinkRepo {
  private readonly sql: SqlClient;

  constructor(private readonly prisma: PrismaClient) {
    this.sql = sqlOf(prisma);
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

  async reviveFailed(ids: readonly string[], errorTypes: readonly string[]): Promise<Array<{ id: string; url: string; generation: number }>> {
    return reviveFailedLinks(this.prisma, ids, errorTypes);
  }

  async get(id: string): Promise<LinkRecord | null> {
    const [row] = await this.sql.query<LinkRecord>(`SELECT ${COLUMNS} FROM links WHERE id = $1::uuid`, [id]);
    return row ?? null;
  }

  async update(id: string, patch: LinkPatch): Promise<void> {
    const { set, params } = setClause(patch, 2);
    await this.sql.query(`UPDATE links SET ${set} WHERE id = $1::uuid`, [id, ...params]);
  }

  async updateUnlessFinished(id: string, patch: LinkPatch): Promise<boolean> {
    const { set, params } = setClause(patch, 2);
    const rows = await this.sql.query(`UPDATE links SET ${set} WHERE id = $1::uuid AND status NOT IN ('done', 'failed') RETURNING 1`, [id, ...params]);
    return rows.length > 0;
  }

  async countAttempts(id: string, n: number, at: Date): Promise<void> {
    await this.update(id, { attemptsMade: n, lastAttemptAt: at });
  }

  async readRoutable(id: string, now: Date, generation: number): Promise<LinkRecord | null> {
    const [row] = await this.sql.query<LinkRecord>(READ_ROUTABLE_SQL, [id, now, generation]);
    return row ?? null;
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
WHERE id = $1::uuid AND status NOT IN ('done', 'failed') AND (paused_until IS NULL OR paused_until <= $2) AND generation <= $3`;

const UPSERT_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[]) AS t(url, initial_url, domain, learning_mode_enabled)
), inserted AS (
  INSERT INTO links (url, initial_url, domain, learning_mode_enabled, status)
  SELECT url, initial_url, domain, learning_mode_enabled, 'queued' FROM input
  ON CONFLICT (url) DO NOTHING
  RETURNING ${COLUMNS}
)
SELECT inserted.*, true AS created FROM inserted
UNION ALL
SELECT ${COLUMNS.split(', ').map((c) => `links.${c}`).join(', ')}, false AS created FROM links WHERE links.url IN (SELECT url FROM input)`;

const PATCH_COLUMNS: Record<Exclude<keyof LinkPatch, 'attemptsMade'>, string> = {
  status: 'status',
  pausedUntil: 'paused_until',
  riskLevel: 'risk_level',
  fetcher: 'fetcher',
  selectionSource: 'selection_source',
  lastErrorType: 'last_error_type',
  lastError: 'last_error',
  lastAttemptAt: 'last_attempt_at',
};

/** `col = $n, ...` for the defined fields of a patch (numbered from `first`), and updated_at as Prisma's @updatedAt. */
function setClause(patch: LinkPatch, first: number): { set: string; params: unknown[] } {
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
