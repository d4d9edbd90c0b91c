import { CrawlerError, DEFAULT_TRACKING_PARAMS, ERROR_TYPES, LINK_STATUSES, MAX_URL_LENGTH, compileTrackingParams, domainOf, normalizeUrl, stripTrackingParams, type TrackingParamFilter } from '@crawler/core';
import { isInputDbError, type ScheduleStore } from '@crawler/db';
import type { RevisitPolicy } from '@crawler/core';
import type { JobQueues } from '@crawler/queue';
import type { LinkRecord, LinkRepo, NewLink } from '../ports.js';
import { ENQUEUE_WAIT_MS, RouteJobAdder } from './route-job-adder.js';

/** A URL that went in. */
export interface AcceptedLink {
  /** The URL as given. */
  input: string;
  /** Its normalized form without tracking parameters (the link's `url`; a link stored before they were stripped keeps its own). */
  url: string;
  linkId: string;
  /** False when the page was already known (same normalized URL enqueued before or earlier in the batch). */
  created: boolean;
  /**
   * Whether a route job was requested for it: true for a new link or one still `queued` (an existing job with the same
   * id makes the request a no-op, so this is still one job); false for duplicates within the batch and links past routing.
   */
  queued: boolean;
  /**
   * With a max age, what happened to a page already stored: `refreshed` (older than the max age: fetched again, under
   * a new generation), `fresh` (recent enough: left alone) or `in_progress` (its current visit is under way: not
   * duplicated). Absent without a max age and for new links.
   */
  refresh?: 'refreshed' | 'fresh' | 'in_progress';
  /**
   * True when the link is stored and due a route job that Redis could not take now (down, full, or not answering
   * within the enqueue wait): the reconciler adds it once Redis is back. `queued` is false then.
   */
  deferred?: true;
}

/** A URL that did not go in, with a stable code and a message for the person who sent it. */
export interface RejectedLink {
  input: string;
  code: string;
  message: string;
}

export interface EnqueueResult {
  accepted: AcceptedLink[];
  rejected: RejectedLink[];
  /** Why some accepted links are `deferred` (present only when some are): Redis's error, as it was given. */
  deferred?: { reason: string };
}

export interface EnqueueLinksOptions {
  links: LinkRepo;
  queues: JobQueues;
  /** Per-link override of the global learning flag for every URL of this batch (undefined: follow the flag). */
  learningModeEnabled?: boolean;
  /**
   * Fetch a page already stored again when its last visit is older than this many seconds (0: now). One number for
   * the batch, or one per input (undefined: no refresh for that input). Needs `schedule`. @defaultValue no refresh
   */
  maxAgeSeconds?: number | ReadonlyArray<number | undefined>;
  /** Revisit policy for every link of the batch (null: remove theirs). Needs `schedule`. @defaultValue left as is */
  revisit?: RevisitPolicy | null;
  /** Refreshes and policies. */
  schedule?: ScheduleStore;
  /** BullMQ priority of this batch's jobs (queue MAX_JOB_PRIORITY; 1 first among prioritized; unset: before any prioritized). */
  priority?: number;
  /**
   * Query parameters removed before the URL becomes the link's key (exact names or `prefix*`), as a crawl removes
   * them from the links it discovers (CRAWL_TRACKING_PARAMS). @defaultValue DEFAULT_TRACKING_PARAMS
   */
  trackingParams?: readonly string[];
  /**
   * How long to wait for Redis to take the batch's route jobs before answering without them: the links are stored
   * (Postgres is the truth) and the reconciler adds their jobs when Redis is back, so a producer is not held for
   * ioredis' retries (about 11 s) nor told to send again what is already in. @defaultValue ENQUEUE_WAIT_MS
   */
  enqueueWaitMs?: number;
}

/** Characters of a rejected input shown back to whoever sent it. */
const SHOWN_INPUT_CHARS = 200;

/**
 * A rejected input as it is shown in an answer or on a terminal: its first 200 characters and its length when longer,
 * so a producer's multi-megabyte "URL" is not sent back (or printed) whole.
 */
export function shownInput(input: string): string {
  return input.length > SHOWN_INPUT_CHARS ? `${input.slice(0, SHOWN_INPUT_CHARS)}… (${input.length} characters)` : input;
}

/** Why one input cannot be a link, or null when it may be normalized and stored. */
function refuseInput(input: string): RejectedLink | null {
  // Checked on the raw input first so a 100 kB URL is never parsed, and on the normalized form (percent-encoding
  // can triple a non-ASCII URL) below.
  if (input.trim().length > MAX_URL_LENGTH) {
    return { input, code: ERROR_TYPES.urlTooLong, message: `URL longer than ${MAX_URL_LENGTH} characters (${input.trim().length})` };
  }
  // The input is stored as the link's initial URL: credentials in it would be kept and shown. Asked of the URL
  // parser too, which also finds them in spellings without '//' ('https:user:pw@host', 'https:\\user:pw@host', a tab
  // inside the scheme).
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(input.trim()) || hasCredentials(input.trim())) {
    return { input, code: ERROR_TYPES.invalidUrl, message: 'URLs with credentials (user:password@) are not accepted' };
  }
  return null;
}

/** Whether the URL parser finds a user name or password in the input (false when it cannot parse it at all). */
function hasCredentials(input: string): boolean {
  try {
    const url = new URL(input);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}

/**
 * Failures a re-post undoes: they said nothing about the page, and their messages tell the user to re-post. A site
 * that was down, a site that kept rate-limiting (robots.txt or the page answered 429 until the attempts ran out), a
 * tier whose proxies were all down, a fleet that ran no tool the router could choose (`unknown_fetcher`: FETCHERS
 * set wrong, mended since), an address the SSRF guard refused (`blocked_address`: a local or private site before
 * FETCH_ALLOW_HOSTS named it; refused again at once, without a request, while it does not), or a crawl cancelled
 * before it fetched the page (a producer posting that URL wants it, whoever's crawl had admitted it). A wall that
 * outlasted WALL_MAX_WAIT_MS (`blocked_*`) is not among them: its message says "not retried", and a producer
 * re-posting its URLs must not walk the crawler's address back into it.
 */
export const REVIVED_ON_REPOST: readonly string[] = [ERROR_TYPES.siteUnreachable, ERROR_TYPES.rateLimited, ERROR_TYPES.proxyUnavailable, ERROR_TYPES.unknownFetcher, ERROR_TYPES.blockedAddress, ERROR_TYPES.crawlCancelled];

/**
 * Put URLs into the crawl: normalize, reject invalid ones with a per-URL message (they are not stored), dedupe,
 * upsert the links (the same page twice is one link) and add one route job per new link in one round trip
 * (job id = link id, so it is also one job). A URL the database refuses (a value it cannot store) is rejected on its
 * own; the rest of the batch goes in. Only a database that cannot be reached fails the whole call.
 */
export async function enqueueLinks(inputs: readonly string[], opts: EnqueueLinksOptions): Promise<EnqueueResult> {
  // Rejections are answered in input order, whichever step refused them.
  const rejectedAt: Array<[number, RejectedLink]> = [];
  const valid: Array<{ input: string; url: string; domain: string; at: number; spelledWith?: string }> = [];
  const tracking = trackingFilterOf(opts.trackingParams);
  inputs.forEach((input, at) => {
    const refused = refuseInput(input);
    if (refused) {
      rejectedAt.push([at, refused]);
      return;
    }
    try {
      const normalized = normalizeUrl(input);
      // A campaign link (`?utm_source=…`, `fbclid`) is the page without them: one link, fetched and stored once.
      const url = stripTrackingParams(normalized, tracking);
      if (url.length > MAX_URL_LENGTH) {
        rejectedAt.push([at, { input, code: ERROR_TYPES.urlTooLong, message: `URL longer than ${MAX_URL_LENGTH} characters once normalized (${url.length})` }]);
        return;
      }
      valid.push({ input, url, domain: domainOf(url), at, ...(normalized !== url && normalized.length <= MAX_URL_LENGTH ? { spelledWith: normalized } : {}) });
    } catch (err) {
      rejectedAt.push([at, {
        input,
        code: err instanceof CrawlerError ? err.code : 'invalid_url',
        message: err instanceof Error ? err.message : String(err),
      }]);
    }
  });

  await adoptLegacyLinks(valid, opts.links);
  const unique = new Map<string, { input: string; url: string; domain: string; at: number }>();
  for (const v of valid) if (!unique.has(v.url)) unique.set(v.url, v);
  const { rows, refused } = await upsertIsolating(
    opts.links,
    [...unique.values()].map((v) => ({ url: v.url, initialUrl: v.input.trim(), domain: v.domain, learningModeEnabled: opts.learningModeEnabled ?? null, priority: opts.priority ?? null })),
  );
  const refusedUrls = new Set(refused.map((r) => r.url));
  for (const v of valid) {
    if (refusedUrls.has(v.url)) rejectedAt.push([v.at, { input: v.input, code: ERROR_TYPES.invalidUrl, message: 'the database cannot store this URL' }]);
  }
  const rejected = rejectedAt.sort((x, y) => x[0] - y[0]).map(([, r]) => r);
  const byUrl = new Map(rows.map((r) => [r.url, r]));

  // A link still `queued` gets its job (again) too: if a previous enqueue stored the row but died before adding the
  // job, this repairs it; when the job does exist the same job id makes the add a no-op.
  const toQueue: Array<{ id: string; url: string; generation: number; priority?: number | null }> = rows.filter((r) => r.created || r.status === LINK_STATUSES.queued);
  // A link that failed only because its site was down or rate-limited, its proxies were down, the fleet ran no tool
  // for it, or its crawl was cancelled is tried again when posted again: none of these said anything about the page.
  const outage = rows.filter((r) => r.status === LINK_STATUSES.failed && REVIVED_ON_REPOST.includes(r.lastErrorType ?? ''));
  if (outage.length > 0 && opts.links.reviveFailed) toQueue.push(...(await opts.links.reviveFailed(outage.map((r) => r.id), REVIVED_ON_REPOST, opts.priority)));
  const jobs = new RouteJobAdder((inputs) => opts.queues.enqueueRoutes(inputs), opts.enqueueWaitMs ?? ENQUEUE_WAIT_MS);
  // A revived link's job takes its stored priority (this batch's, or the one it kept), as a rebuilt job would.
  await jobs.add(toQueue.map((r) => ({ linkId: r.id, url: r.url, generation: r.generation, priority: r.priority ?? opts.priority })));
  const queuedIds = new Set(toQueue.map((r) => r.id));

  // Refresh on demand: finished pages older than their max age start a new visit (new generation, so a stale job of
  // the old one is skipped) and get a route job; the rest are reported fresh or in progress.
  const refreshOf = new Map<string, AcceptedLink['refresh']>();
  const ageAt = (at: number): number | undefined => (typeof opts.maxAgeSeconds === 'number' ? opts.maxAgeSeconds : opts.maxAgeSeconds?.[at]);
  const refreshItems = [...unique.values()].flatMap((v) => {
    const row = byUrl.get(v.url);
    const maxAgeSeconds = ageAt(v.at);
    if (!row || maxAgeSeconds === undefined) return [];
    if (row.created || queuedIds.has(row.id)) {
      if (!row.created) refreshOf.set(row.id, 'in_progress');
      return [];
    }
    return [{ linkId: row.id, maxAgeSeconds, priority: opts.priority ?? null }];
  });
  if (refreshItems.length > 0 || opts.revisit !== undefined) {
    if (!opts.schedule) throw new Error('enqueueLinks: maxAgeSeconds and revisit need a schedule store');
    const result = await opts.schedule.refresh(refreshItems);
    // The stored priority: this batch's, or the link's own when the batch gave none (what a rebuilt job would carry).
    await jobs.add(result.refreshed.map((r) => ({ ...r, priority: r.priority ?? opts.priority })));
    for (const r of result.refreshed) {
      refreshOf.set(r.linkId, 'refreshed');
      queuedIds.add(r.linkId);
    }
    for (const id of result.fresh) refreshOf.set(id, 'fresh');
    for (const id of result.busy) refreshOf.set(id, 'in_progress');
    // After the refresh: the policy of a link whose visit just started applies when that visit ends.
    if (opts.revisit !== undefined) await opts.schedule.setPolicy(rows.map((r) => r.id), opts.revisit);
  }

  const seen = new Set<string>();
  const accepted: AcceptedLink[] = valid.flatMap((v) => {
    const row = byUrl.get(v.url);
    if (!row) return [];
    const first = !seen.has(v.url);
    seen.add(v.url);
    const refresh = first ? refreshOf.get(row.id) : undefined;
    const deferred = first && jobs.deferred.has(row.id);
    return [{ input: v.input, url: v.url, linkId: row.id, created: first && row.created, queued: first && queuedIds.has(row.id) && !deferred, ...(refresh ? { refresh } : {}), ...(deferred ? { deferred: true as const } : {}) }];
  });
  return { accepted, rejected, ...(jobs.deferredReason !== undefined ? { deferred: { reason: jobs.deferredReason } } : {}) };
}

const DEFAULT_FILTER = compileTrackingParams(DEFAULT_TRACKING_PARAMS);

function trackingFilterOf(params: readonly string[] | undefined): TrackingParamFilter {
  return params === undefined ? DEFAULT_FILTER : compileTrackingParams(params);
}

/**
 * Links stored before tracking parameters were stripped on enqueue keep their URL as it was spelled then: an input
 * whose stripped form is new but whose full form is a stored link stays that link (its id, history and stored
 * pages), not a second row for the same page. Needs `links.existingUrls`; without it every input takes its
 * stripped form.
 */
async function adoptLegacyLinks(valid: Array<{ url: string; domain: string; spelledWith?: string }>, links: LinkRepo): Promise<void> {
  if (!links.existingUrls) return;
  const spelled = valid.filter((v) => v.spelledWith !== undefined);
  if (spelled.length === 0) return;
  const candidates = [...new Set(spelled.flatMap((v) => [v.url, v.spelledWith!]))];
  const stored = new Set(await links.existingUrls(candidates));
  for (const v of spelled) {
    // The stripped form wins when both are stored: it is the key every new spelling of the page goes to.
    if (!stored.has(v.url) && stored.has(v.spelledWith!)) v.url = v.spelledWith!;
  }
}

/**
 * upsertMany, and when the database refuses the values themselves (not when it is unreachable), find the links that
 * cause it by halving the batch, so one bad input costs itself and not its neighbours.
 */
async function upsertIsolating(links: LinkRepo, rows: NewLink[]): Promise<{ rows: Array<LinkRecord & { created: boolean }>; refused: NewLink[] }> {
  try {
    return { rows: await links.upsertMany(rows), refused: [] };
  } catch (err) {
    if (!isInputDbError(err)) throw err;
    if (rows.length === 1) return { rows: [], refused: rows };
    const half = Math.ceil(rows.length / 2);
    const [a, b] = [await upsertIsolating(links, rows.slice(0, half)), await upsertIsolating(links, rows.slice(half))];
    return { rows: [...a.rows, ...b.rows], refused: [...a.refused, ...b.refused] };
  }
}
