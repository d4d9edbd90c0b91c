import { ERROR_TYPES, LINK_STATUSES, type CrawlScope, type RevisitPolicy } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { sqlOf, withTransaction, type SqlClient } from '../sql.js';
import { IN_PROGRESS_SQL_LIST, IN_PROGRESS_STATUSES } from '../sql-lists.js';
import { storedLinkStates, takeOverStaleLinks } from '../schedule/crawl-revisits.js';

/** A crawl's rules as stored. */
export interface CrawlRecord {
  id: string;
  /** running | cancelled (done is derived, see {@link CrawlView}) */
  status: string;
  seeds: string[];
  scope: CrawlScope;
  include: string[];
  exclude: string[];
  maxDepth: number | null;
  maxPages: number | null;
  maxPagesPerHost: number | null;
  followNofollow: boolean;
  /** null: DEFAULT_TRACKING_PARAMS */
  trackingParams: string[] | null;
  sitemaps: boolean;
  /** A stored page last visited longer ago than this (seconds) is fetched again by this crawl; null: it is a duplicate. */
  maxAgeSeconds: number | null;
  /** Revisit policy of every link the crawl admits; null: none. */
  revisit: RevisitPolicy | null;
  createdAt: Date;
}

/**
 * The rule that refused a discovered link, as `outOfScope` counts it: `scope`, another site, host or origin than the
 * seeds' (by the crawl's scope); `include`, no include pattern matched; `exclude`, an exclude pattern matched;
 * `trap`, a path that repeats itself (`/a/b/a/b/a/b/`); `nofollow`, rel=nofollow or `X-Robots-Tag: nofollow` on a crawl that does not follow them. The first that applies,
 * in this order.
 */
export const OUT_OF_SCOPE_REASONS = ['scope', 'include', 'exclude', 'trap', 'nofollow'] as const;
export type OutOfScopeReason = (typeof OUT_OF_SCOPE_REASONS)[number];

/** Distinct refused URLs kept per reason with the crawl's counters. */
export const OUT_OF_SCOPE_SAMPLES_KEPT = 5;
/** A sample URL longer than this is cut (with "…"): it is there to be read, not fetched. */
export const OUT_OF_SCOPE_SAMPLE_MAX_CHARS = 300;

/** A crawl's counters: decisions on discovered links, and its links by status. */
export interface CrawlCounters {
  /** Distinct links seen per page (and seeds and sitemap entries), before any rule. */
  discovered: number;
  /** Admitted for fetching: counts against maxPages. */
  admitted: number;
  /** Refused because the crawl had already decided on the same frontier key. */
  duplicate: number;
  /** Refused by the scope, an include or an exclude, or nofollow. */
  outOfScope: number;
  /**
   * outOfScope by the rule that refused the link. Their sum is outOfScope, but for links a crawl counted before the
   * breakdown existed (migration 20261211020000), which are in none of them.
   */
  outOfScopeByReason: Record<OutOfScopeReason, number>;
  /** Refused by maxDepth, maxPages or maxPagesPerHost. */
  overLimit: number;
  /** The part of overLimit refused by maxDepth (the rest: maxPages or maxPagesPerHost). */
  overDepth: number;
  /** Stored pages fetched again because they were older than maxAgeSeconds, and seeds that had failed (included in admitted). */
  refreshed: number;
  /** Stored pages left alone because they were fresh enough (included in duplicate). */
  fresh: number;
  queued: number;
  routing: number;
  fetching: number;
  paused: number;
  done: number;
  failed: number;
}

/** GET /crawls/:id. */
export interface CrawlView extends CrawlRecord {
  /** running until none of its links is queued, routing, fetching or paused; cancelled when cancelled. */
  state: 'running' | 'done' | 'cancelled';
  counters: CrawlCounters;
  /** The first few distinct URLs each rule refused ({@link OUT_OF_SCOPE_SAMPLES_KEPT} at most), by reason; a reason that refused none is absent. */
  outOfScopeSamples: Partial<Record<OutOfScopeReason, string[]>>;
}

/** A URL the frontier is asked to admit. */
export interface FrontierCandidate {
  /** Canonical URL to fetch (the link's url). */
  url: string;
  /** Frontier key (dedup): {@link frontierKey} of the url. */
  key: string;
  /** Host, for the per-host cap. */
  host: string;
  /** The link's domain (learning, politeness). */
  domain: string;
  initialUrl: string;
  depth: number;
}

/** One admission: candidates in priority order (document order), from one page or the seeds. */
export interface AdmitRequest {
  crawlId: string;
  /** The page the candidates were found on; null for seeds and sitemap entries. */
  discoveredFrom: string | null;
  candidates: FrontierCandidate[];
  /** Keys to mark seen without fetching (a page's rel=canonical target: its content is this page's). */
  alsoSeen?: Array<{ key: string; host: string }>;
  /** Decided before the frontier (counted with this admission): occurrences seen, refused by scope, by depth. */
  tally: AdmitTally;
}

/** What the frontier decided before the store: occurrences seen, refused by its rules, by depth. */
export interface AdmitTally {
  discovered: number;
  outOfScope: number;
  overLimit: number;
  duplicate?: number;
  /** The part of overLimit refused by maxDepth. */
  overDepth?: number;
  /** outOfScope by reason (a reason absent: none). */
  outOfScopeBy?: Partial<Record<OutOfScopeReason, number>>;
  /** A few URLs refused, by reason: the store keeps the first {@link OUT_OF_SCOPE_SAMPLES_KEPT} distinct ones of a crawl. */
  outOfScopeSamples?: Partial<Record<OutOfScopeReason, string[]>>;
}

/** What the frontier admitted: links to route now. */
export interface AdmitResult {
  /** generation: set for stored pages fetched again (a new visit); new links are generation 0. */
  admitted: Array<{ linkId: string; url: string; generation?: number }>;
  duplicate: number;
  overLimit: number;
  /** The crawl is cancelled (or gone): nothing was admitted. */
  closed: boolean;
}

const CRAWL_COLUMNS = `id, status, seeds, scope, include, exclude, max_depth AS "maxDepth", max_pages AS "maxPages",
  max_pages_per_host AS "maxPagesPerHost", follow_nofollow AS "followNofollow", tracking_params AS "trackingParams", sitemaps,
  max_age_s AS "maxAgeSeconds",
  CASE revisit_mode WHEN 'fixed' THEN json_build_object('mode', 'fixed', 'intervalSeconds', revisit_interval_s)
    WHEN 'adaptive' THEN json_build_object('mode', 'adaptive', 'intervalSeconds', revisit_interval_s, 'minSeconds', revisit_min_s, 'maxSeconds', revisit_max_s)
  END AS revisit,
  created_at AS "createdAt"`;


/**
 * Crawls in Postgres, the source of truth for admission: every admission for a crawl runs in one transaction that
 * holds the crawl's row lock, reads which keys the crawl has already decided on (crawl_frontier, primary key
 * (crawl, key)), admits new ones in order while the page budget and the per-host caps allow, inserts their links
 * and frontier rows, and moves the counters. Admissions of one crawl are therefore serial, whatever the number of
 * workers and processes: no key is admitted twice and `admitted` never passes max_pages.
 */
export class CrawlStore {
  readonly #prisma: PrismaClient;
  readonly #sql: SqlClient;

  constructor(prisma: PrismaClient) {
    this.#prisma = prisma;
    this.#sql = sqlOf(prisma);
  }

  /** Create a crawl and admit its seeds in the same transaction: a crawl is never visible without its seeds. */
  async create(
    spec: Omit<CrawlRecord, 'id' | 'status' | 'createdAt'>,
    seeds: (crawlId: string) => Omit<AdmitRequest, 'crawlId' | 'discoveredFrom'>,
  ): Promise<{ crawl: CrawlRecord; admitted: AdmitResult['admitted'] }> {
    return withTransaction(this.#prisma, async (tx) => {
      const [crawl] = await tx.query<CrawlRecord>(
        `INSERT INTO crawls (seeds, scope, include, exclude, max_depth, max_pages, max_pages_per_host, follow_nofollow, tracking_params, sitemaps,
           max_age_s, revisit_mode, revisit_interval_s, revisit_min_s, revisit_max_s)
         VALUES ($1::text[], $2, $3::text[], $4::text[], $5::int, $6::int, $7::int, $8, $9::text[], $10, $11::float8, $12, $13::float8, $14::float8, $15::float8)
         RETURNING ${CRAWL_COLUMNS}`,
        [spec.seeds, spec.scope, spec.include, spec.exclude, spec.maxDepth, spec.maxPages, spec.maxPagesPerHost, spec.followNofollow, spec.trackingParams, spec.sitemaps,
          spec.maxAgeSeconds, spec.revisit?.mode ?? null, spec.revisit?.intervalSeconds ?? null,
          spec.revisit?.mode === 'adaptive' ? spec.revisit.minSeconds : null, spec.revisit?.mode === 'adaptive' ? spec.revisit.maxSeconds : null],
      );
      const result = await admitIn(tx, { ...seeds(crawl!.id), crawlId: crawl!.id, discoveredFrom: null });
      return { crawl: crawl!, admitted: result.admitted };
    });
  }

  async get(id: string): Promise<CrawlRecord | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.#sql.query<CrawlRecord>(`SELECT ${CRAWL_COLUMNS} FROM crawls WHERE id = $1::uuid`, [id]);
    return row ?? null;
  }

  /** The crawl with its state and counters, or null. The same answer from any process: it is all in Postgres. */
  async view(id: string): Promise<CrawlView | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.#sql.query<
      CrawlRecord & Record<'discovered' | 'admitted' | 'duplicate' | 'outOfScope' | 'overLimit' | 'overDepth' | 'refreshed' | 'fresh' | 'handedDone' | 'handedFailed', string>
        & { outOfScopeBy: Record<OutOfScopeReason, string>; outOfScopeSamples: Partial<Record<OutOfScopeReason, string[]>> }
    >(
      `SELECT ${CRAWL_COLUMNS}, admitted::text, discovered::text, duplicate::text, out_of_scope::text AS "outOfScope", over_limit::text AS "overLimit",
         over_depth::text AS "overDepth", refreshed::text, fresh::text, handed_over_done::text AS "handedDone", handed_over_failed::text AS "handedFailed",
         json_build_object('scope', out_of_scope_by_scope::text, 'include', out_of_scope_by_include::text, 'exclude', out_of_scope_by_exclude::text, 'trap', out_of_scope_by_trap::text,
           'nofollow', out_of_scope_by_nofollow::text) AS "outOfScopeBy", out_of_scope_samples AS "outOfScopeSamples"
       FROM crawls WHERE id = $1::uuid`,
      [id],
    );
    if (!row) return null;
    const byStatus = await this.#sql.query<{ status: string; n: string }>(
      'SELECT status, count(*)::text AS n FROM links WHERE crawl = $1::uuid GROUP BY status',
      [id],
    );
    const n = (s: string): number => Number(byStatus.find((r) => r.status === s)?.n ?? 0);
    const counters: CrawlCounters = {
      discovered: Number(row.discovered), admitted: Number(row.admitted), duplicate: Number(row.duplicate),
      outOfScope: Number(row.outOfScope),
      outOfScopeByReason: Object.fromEntries(OUT_OF_SCOPE_REASONS.map((r) => [r, Number(row.outOfScopeBy[r])])) as Record<OutOfScopeReason, number>,
      overLimit: Number(row.overLimit), overDepth: Number(row.overDepth), refreshed: Number(row.refreshed), fresh: Number(row.fresh),
      queued: n(LINK_STATUSES.queued), routing: n(LINK_STATUSES.routing), fetching: n(LINK_STATUSES.fetching), paused: n(LINK_STATUSES.paused),
      // Links a later crawl took over to fetch again still count here, with the status they had then.
      done: n(LINK_STATUSES.done) + Number(row.handedDone), failed: n(LINK_STATUSES.failed) + Number(row.handedFailed),
    };
    const inProgress = counters.queued + counters.routing + counters.fetching + counters.paused;
    const { discovered: _d, admitted: _a, duplicate: _u, outOfScope: _o, overLimit: _l, overDepth: _od, refreshed: _r, fresh: _f, handedDone: _hd, handedFailed: _hf, outOfScopeBy: _ob, outOfScopeSamples, ...record } = row;
    const state = row.status === 'cancelled' ? 'cancelled' : inProgress === 0 ? 'done' : 'running';
    return { ...record, state, counters, outOfScopeSamples };
  }

  /** True when the crawl exists and none of its links is in progress (or it is cancelled). */
  async isSettled(id: string): Promise<boolean> {
    const [row] = await this.#sql.query<{ settled: boolean }>(
      `SELECT NOT EXISTS (SELECT 1 FROM links WHERE crawl = $1::uuid AND status = ANY($2::text[])) AS settled`,
      [id, IN_PROGRESS_STATUSES],
    );
    return row?.settled ?? true;
  }

  /**
   * Cancel: the crawl admits nothing more, and every unfinished link of it fails with `crawl_cancelled` (their
   * queued jobs then skip them). A request already on the wire finishes and its attempt is logged, but its page is not
   * stored (an outcome stores a page only with the change of an unfinished link) and its links are not followed.
   * False when there is no such running crawl.
   */
  async cancel(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return withTransaction(this.#prisma, async (tx) => {
      const rows = await tx.query(`UPDATE crawls SET status = 'cancelled', cancelled_at = now(), updated_at = now() WHERE id = $1::uuid AND status = 'running' RETURNING 1`, [id]);
      if (rows.length === 0) return false;
      await tx.query(
        `UPDATE links SET status = '${LINK_STATUSES.failed}', last_error_type = $2, last_error = 'the crawl was cancelled', updated_at = now()
         WHERE crawl = $1::uuid AND status IN (${IN_PROGRESS_SQL_LIST})`,
        [id, ERROR_TYPES.crawlCancelled],
      );
      return true;
    });
  }

  /**
   * Add a seed to a running crawl (where one of its seeds redirected to, see CrawlFrontier) and return its seeds
   * after the change: the same list when the URL is one already, null when the crawl is not running.
   */
  async addSeed(id: string, url: string): Promise<string[] | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.#sql.query<{ seeds: string[] }>(
      `UPDATE crawls SET seeds = CASE WHEN $2 = ANY(seeds) THEN seeds ELSE array_append(seeds, $2) END, updated_at = now()
       WHERE id = $1::uuid AND status = 'running' RETURNING seeds`,
      [id, url],
    );
    return row?.seeds ?? null;
  }

  /**
   * The keys among these the crawl has already decided on (admitted, refused by a limit, or marked seen), read
   * without the crawl's lock: for a caller that offers only new keys, so a list it sees again and again (a sitemap's)
   * is not counted as duplicates each time. A key decided meanwhile is still caught by {@link admit}.
   */
  async decidedKeys(crawlId: string, keys: readonly string[]): Promise<Set<string>> {
    if (!isUuid(crawlId) || keys.length === 0) return new Set();
    const rows = await this.#sql.query<{ key: string }>('SELECT key FROM crawl_frontier WHERE crawl = $1::uuid AND key = ANY($2::text[])', [crawlId, [...keys]]);
    return new Set(rows.map((r) => r.key));
  }

  /** Admit candidates (see the class comment). */
  admit(req: AdmitRequest): Promise<AdmitResult> {
    if (req.candidates.length === 0 && (req.alsoSeen ?? []).length === 0) return admitIn(this.#sql, req);
    return withTransaction(this.#prisma, (tx) => admitIn(tx, req));
  }

  /**
   * Links of running crawls that are `queued` and were last written more than `olderThanMs` ago: a process that
   * died between admitting them and adding their route jobs left them without a job. Re-adding is safe (the job id
   * is the link id: an existing job makes it a no-op).
   */
  async stranded(olderThanMs: number, limit = 10_000): Promise<Array<{ linkId: string; url: string; generation: number }>> {
    return this.#sql.query<{ linkId: string; url: string; generation: number }>(
      `SELECT l.id AS "linkId", l.url, l.generation FROM links l JOIN crawls c ON c.id = l.crawl
       WHERE c.status = 'running' AND l.status = '${LINK_STATUSES.queued}' AND l.updated_at < now() - ($1::int * interval '1 millisecond') LIMIT $2::int`,
      [olderThanMs, limit],
    );
  }
}

/** The admission transaction's body: `tx` is inside BEGIN … COMMIT. */
async function admitIn(tx: SqlClient, req: AdmitRequest): Promise<AdmitResult> {
  if (req.candidates.length === 0 && (req.alsoSeen ?? []).length === 0) {
    // Nothing to decide (every link was out of scope or known): only the counters move, without the crawl's lock.
    const rows = await tx.query<{ status: string }>(
      `UPDATE crawls SET discovered = discovered + $2::bigint, duplicate = duplicate + $3::bigint, out_of_scope = out_of_scope + $4::bigint,
         over_limit = over_limit + $5::bigint, over_depth = over_depth + $6::bigint, ${OUT_OF_SCOPE_SET(7)}, updated_at = now() WHERE id = $1::uuid RETURNING status`,
      [req.crawlId, req.tally.discovered, req.tally.duplicate ?? 0, req.tally.outOfScope, req.tally.overLimit, req.tally.overDepth ?? 0, ...outOfScopeParams(req.tally)],
    );
    return { admitted: [], duplicate: req.tally.duplicate ?? 0, overLimit: req.tally.overLimit, closed: rows[0]?.status !== 'running' };
  }
  const [crawl] = await tx.query<{ status: string; maxPages: number | null; admitted: number; maxPerHost: number | null; maxAgeS: number | null }>(
    'SELECT status, max_pages AS "maxPages", admitted, max_pages_per_host AS "maxPerHost", max_age_s AS "maxAgeS" FROM crawls WHERE id = $1::uuid FOR UPDATE',
    [req.crawlId],
  );
  if (!crawl || crawl.status !== 'running') return { admitted: [], duplicate: 0, overLimit: 0, closed: true };

  const alsoSeen = req.alsoSeen ?? [];
  const keys = [...new Set([...req.candidates.map((c) => c.key), ...alsoSeen.map((s) => s.key)])];
  const seenRows = keys.length > 0 ? await tx.query<{ key: string }>('SELECT key FROM crawl_frontier WHERE crawl = $1::uuid AND key = ANY($2::text[])', [req.crawlId, keys]) : [];
  const seen = new Set(seenRows.map((r) => r.key));
  // A canonical target is decided by this page before its links are: a link to it on the same page is a duplicate.
  const newlySeen = alsoSeen.filter((s) => !seen.has(s.key));
  for (const s of newlySeen) seen.add(s.key);

  let duplicate = req.tally.duplicate ?? 0;
  let overLimit = req.tally.overLimit;
  let budget = crawl.maxPages === null ? Number.POSITIVE_INFINITY : Math.max(0, crawl.maxPages - crawl.admitted);
  const hostCounts = new Map<string, number>();
  if (crawl.maxPerHost !== null) {
    const hosts = [...new Set(req.candidates.map((c) => c.host))];
    if (hosts.length > 0) {
      for (const r of await tx.query<{ host: string; admitted: number }>('SELECT host, admitted FROM crawl_hosts WHERE crawl = $1::uuid AND host = ANY($2::text[])', [req.crawlId, hosts])) {
        hostCounts.set(r.host, r.admitted);
      }
    }
  }
  const fresh: FrontierCandidate[] = [];
  for (const c of req.candidates) {
    if (seen.has(c.key)) duplicate += 1;
    else {
      seen.add(c.key);
      fresh.push(c);
    }
  }
  // Pages some other owner already has (a producer, another crawl) are set aside first, so they never hold a budget
  // or host slot for a moment that a later candidate needed; the rounds below catch one inserted meanwhile.
  // With a max age, a stored page last visited longer ago is this crawl's to fetch again (a re-crawl), like a new one.
  // A seed (or sitemap entry) that failed before is fetched again: a failed link has no page for the crawl to follow
  // links from, and the crawl names it. A failed link found on a page stays another owner's, as a done one does.
  const retryFailed = req.discoveredFrom === null;
  const stored = await storedLinkStates(tx, fresh.map((c) => c.url), crawl.maxAgeS, retryFailed);
  const owned = new Set([...stored].filter(([, s]) => !s.stale).map(([url]) => url));
  const stale = new Set([...stored].filter(([, s]) => s.stale).map(([url]) => url));
  let freshStored = 0;
  let refreshed = 0;
  const admitted: AdmitResult['admitted'] = [];
  const won: FrontierCandidate[] = [];
  // Another owner's url: decided here (a duplicate), not fetched by this crawl.
  const taken: FrontierCandidate[] = [];
  // Refused by a limit: recorded as decided, so a later page offering it again is a duplicate, not a second refusal.
  const refused: FrontierCandidate[] = [];
  let next = 0;
  // Rounds: a candidate that turns out to be another owner's gives its slot to the next one in order, so the budget
  // is met exactly whenever there are enough candidates.
  while (next < fresh.length) {
    const round: FrontierCandidate[] = [];
    while (next < fresh.length && round.length < budget) {
      const c = fresh[next++]!;
      if (owned.has(c.url)) {
        if (crawl.maxAgeS !== null && stored.get(c.url)?.finished) freshStored += 1;
        taken.push(c);
        continue;
      }
      const onHost = hostCounts.get(c.host) ?? 0;
      if (crawl.maxPerHost !== null && onHost >= crawl.maxPerHost) {
        refused.push(c);
        continue;
      }
      hostCounts.set(c.host, onHost + 1);
      round.push(c);
    }
    if (round.length === 0) break;
    // In url order, so two crawls inserting overlapping urls wait on each other instead of deadlocking. A url already
    // stored as a link (enqueued by a producer or another crawl) is that link's: the fleet stores a page once.
    const insert = round.filter((c) => !stale.has(c.url));
    // New links take the crawl's revisit policy (none when it has none).
    const inserted = insert.length === 0 ? [] : await tx.query<{ linkId: string; url: string }>(
      `INSERT INTO links (url, initial_url, domain, status, crawl, depth, discovered_from, revisit_mode, revisit_interval_s, revisit_min_s, revisit_max_s)
       SELECT url, initial_url, domain, '${LINK_STATUSES.queued}', $5::uuid, depth, $6::uuid, c.revisit_mode, c.revisit_interval_s, c.revisit_min_s, c.revisit_max_s
       FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS t(url, initial_url, domain, depth)
       CROSS JOIN (SELECT revisit_mode, revisit_interval_s, revisit_min_s, revisit_max_s FROM crawls WHERE id = $5::uuid) c
       ORDER BY url
       ON CONFLICT (url) DO NOTHING
       RETURNING id AS "linkId", url`,
      [insert.map((c) => c.url), insert.map((c) => c.initialUrl), insert.map((c) => c.domain), insert.map((c) => c.depth), req.crawlId, req.discoveredFrom],
    );
    const again = round.filter((c) => stale.has(c.url));
    const restarted = again.length === 0 ? [] : await takeOverStaleLinks(tx, {
      crawlId: req.crawlId, discoveredFrom: req.discoveredFrom, maxAgeSeconds: crawl.maxAgeS, retryFailed, rows: again.map((c) => ({ url: c.url, depth: c.depth })),
    });
    refreshed += restarted.length;
    for (const a of restarted) admitted.push(a);
    const got = new Set([...inserted.map((a) => a.url), ...restarted.map((a) => a.url)]);
    for (const a of inserted) admitted.push(a);
    for (const c of round) {
      if (got.has(c.url)) won.push(c);
      else {
        taken.push(c);
        hostCounts.set(c.host, (hostCounts.get(c.host) ?? 1) - 1);
      }
    }
    budget -= inserted.length + restarted.length;
  }
  // A loop, not push(...): a sitemap's list past the crawl's limit can be longer than a call's arguments may be.
  for (let i = next; i < fresh.length; i++) refused.push(fresh[i]!);
  duplicate += taken.length;
  overLimit += refused.length;

  const rows = [
    ...won.map((c) => ({ key: c.key, host: c.host, admitted: true })),
    ...[...taken, ...refused].map((c) => ({ key: c.key, host: c.host, admitted: false })),
    ...newlySeen.map((s) => ({ key: s.key, host: s.host, admitted: false })),
  ];
  if (rows.length > 0) {
    await tx.query(
      `INSERT INTO crawl_frontier (crawl, key, host, admitted)
       SELECT $1::uuid, key, host, admitted FROM unnest($2::text[], $3::text[], $4::boolean[]) AS t(key, host, admitted)
       ON CONFLICT (crawl, key) DO NOTHING`,
      [req.crawlId, rows.map((r) => r.key), rows.map((r) => r.host), rows.map((r) => r.admitted)],
    );
  }
  if (crawl.maxPerHost !== null && won.length > 0) {
    const perHost = new Map<string, number>();
    for (const c of won) perHost.set(c.host, (perHost.get(c.host) ?? 0) + 1);
    await tx.query(
      `INSERT INTO crawl_hosts (crawl, host, admitted) SELECT $1::uuid, host, n FROM unnest($2::text[], $3::int[]) AS t(host, n)
       ON CONFLICT (crawl, host) DO UPDATE SET admitted = crawl_hosts.admitted + EXCLUDED.admitted`,
      [req.crawlId, [...perHost.keys()], [...perHost.values()]],
    );
  }
  await tx.query(
    `UPDATE crawls SET admitted = admitted + $2::int, discovered = discovered + $3::bigint, duplicate = duplicate + $4::bigint,
       out_of_scope = out_of_scope + $5::bigint, over_limit = over_limit + $6::bigint, refreshed = refreshed + $7::bigint, fresh = fresh + $8::bigint,
       over_depth = over_depth + $9::bigint, ${OUT_OF_SCOPE_SET(10)}, updated_at = now() WHERE id = $1::uuid`,
    [req.crawlId, won.length, req.tally.discovered, duplicate, req.tally.outOfScope, overLimit, refreshed, freshStored, req.tally.overDepth ?? 0, ...outOfScopeParams(req.tally)],
  );
  return { admitted, duplicate, overLimit, closed: false };
}

/**
 * The SET clauses that add a tally's outOfScope breakdown to a crawl, its parameters from `$first` on
 * ({@link outOfScopeParams}: a count per reason, then the samples). Samples are merged in the row's own UPDATE, so two
 * admissions of one crawl never lose each other's: kept in order of arrival, distinct, the first few per reason. Once
 * every reason offered is full the column is assigned to itself: no new value is built (nor TOASTed again).
 */
function OUT_OF_SCOPE_SET(first: number): string {
  const counts = OUT_OF_SCOPE_REASONS.map((r, i) => `out_of_scope_by_${r} = out_of_scope_by_${r} + $${first + i}::bigint`);
  const samples = `$${first + OUT_OF_SCOPE_REASONS.length}::jsonb`;
  return `${counts.join(', ')},
    out_of_scope_samples = CASE WHEN NOT EXISTS (SELECT 1 FROM jsonb_each(${samples}) n
        WHERE jsonb_array_length(COALESCE(out_of_scope_samples -> n.key, '[]'::jsonb)) < ${OUT_OF_SCOPE_SAMPLES_KEPT})
      THEN out_of_scope_samples ELSE out_of_scope_samples || COALESCE((
      SELECT jsonb_object_agg(n.key, (
        SELECT jsonb_agg(u ORDER BY first) FROM (
          SELECT u, min(i) AS first FROM jsonb_array_elements(COALESCE(out_of_scope_samples -> n.key, '[]'::jsonb) || n.value) WITH ORDINALITY AS e(u, i)
          GROUP BY u ORDER BY first LIMIT ${OUT_OF_SCOPE_SAMPLES_KEPT}) kept))
      FROM jsonb_each(${samples}) n
      WHERE jsonb_array_length(COALESCE(out_of_scope_samples -> n.key, '[]'::jsonb)) < ${OUT_OF_SCOPE_SAMPLES_KEPT}), '{}'::jsonb) END`;
}

/** The parameters of {@link OUT_OF_SCOPE_SET}: counts per reason, then the samples (cut, at most the number kept). */
function outOfScopeParams(tally: AdmitTally): [...number[], string] {
  const samples: Partial<Record<OutOfScopeReason, string[]>> = {};
  for (const r of OUT_OF_SCOPE_REASONS) {
    const urls = tally.outOfScopeSamples?.[r];
    if (urls && urls.length > 0) {
      samples[r] = urls.slice(0, OUT_OF_SCOPE_SAMPLES_KEPT).map((u) => (u.length > OUT_OF_SCOPE_SAMPLE_MAX_CHARS ? `${u.slice(0, OUT_OF_SCOPE_SAMPLE_MAX_CHARS - 1)}…` : u));
    }
  }
  return [...OUT_OF_SCOPE_REASONS.map((r) => tally.outOfScopeBy?.[r] ?? 0), JSON.stringify(samples)];
}

function isUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
}
