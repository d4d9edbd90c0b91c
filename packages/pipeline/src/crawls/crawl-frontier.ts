import {
  CRAWL_SCOPES,
  DEFAULT_TRACKING_PARAMS,
  ScheduleInputError,
  canonicalCrawlUrl,
  checkMaxAgeSeconds,
  checkRevisitPolicy,
  compileScope,
  compileUrlPattern,
  compileTrackingParams,
  domainOf,
  extractLinks,
  extractJsonFeedLinks,
  extractXmlLinks,
  frontierKey,
  looksLikeFeed,
  robotsHeaderNofollow,
  mimeOf,
  type CrawlScope,
  type Logger,
  type PageLinks,
  type RevisitPolicyInput,
  type ScopeMatcher,
  type TrackingParamFilter,
} from '@crawler/core';
import type { RouteJobInput } from '@crawler/queue';
import type { RejectedLink } from '../links/enqueue-links.js';
import type { LinkRecord } from '../ports.js';
import type { AdmitRequest, CrawlRecord, CrawlStore, FrontierCandidate } from '@crawler/db';
import { readSitemaps, type SitemapFetch, type SitemapFileState, type SitemapLimits, type SitemapReport } from './sitemaps.js';
import type { SeenCache } from './seen-cache.js';
import { RouteJobAdder } from '../links/route-job-adder.js';
import { OutOfScopeTally, refusalOf } from './out-of-scope-tally.js';

/** What a crawl is asked to do (POST /crawls, `crawl crawl --follow`). */
export interface CrawlSpec {
  seeds: string[];
  /** @defaultValue 'same-site' */
  scope?: CrawlScope;
  /** Globs or `re:` regexes; a URL must match one of them (when given). */
  include?: string[];
  /** Globs or `re:` regexes; a URL matching one is not followed. */
  exclude?: string[];
  /** Links followed from a seed; null/undefined: no limit. Seeds are depth 0. */
  maxDepth?: number | null;
  /** Pages admitted for fetching (done + failed), seeds included; null/undefined: no limit. */
  maxPages?: number | null;
  maxPagesPerHost?: number | null;
  /** Follow rel=nofollow links too. @defaultValue false */
  followNofollow?: boolean;
  /** Query parameters to strip before dedup (exact names or `prefix*`). @defaultValue DEFAULT_TRACKING_PARAMS */
  trackingParams?: string[] | null;
  /** Also start from the seeds' sitemaps (robots.txt Sitemap: lines, else /sitemap.xml). @defaultValue false */
  sitemaps?: boolean;
  /**
   * Re-crawl: a page already stored (by an earlier crawl or a producer) whose last visit is older than this many
   * seconds is fetched again by this crawl, seeds included (0: every stored page). @defaultValue null: stored pages
   * are duplicates
   */
  maxAgeSeconds?: number | null;
  /** Revisit policy given to every link this crawl admits (see ScheduleStore). @defaultValue none */
  revisit?: RevisitPolicyInput | null;
}

/** A crawl spec that cannot be run, with the field at fault. */
export class CrawlSpecError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
    this.name = 'CrawlSpecError';
  }
}

/** Result of {@link CrawlFrontier.create}. */
export interface CreatedCrawl {
  crawl: CrawlRecord;
  /** Seeds (and sitemap entries) admitted. */
  admitted: number;
  /** Seeds that are not crawlable URLs. */
  rejected: RejectedLink[];
  sitemaps?: SitemapReport;
  /**
   * Present when Redis could not take the admitted links' route jobs (down, full, or silent past the wait): the crawl
   * and its links are stored, and the reconciler gives them their jobs once Redis is back. Sending the crawl again
   * would make a second crawl.
   */
  deferred?: { links: number; reason: string };
}

/** What {@link CrawlFrontier.admitSitemapUrls} did. */
export interface SitemapAdmission {
  /** New links admitted (and routed). */
  admitted: number;
  /** Pages new to the crawl offered to the store (admitted, or refused by a limit, or taken meanwhile). */
  offered: number;
  /** Listed pages outside the crawl's scope, include or exclude. */
  outOfScope: number;
  /** More new pages were listed than `maxLinks`: the rest wait for the next re-read. */
  more: boolean;
}

/** A stored page of a crawl, handed to discovery. */
export interface DiscoveredPage {
  link: Pick<LinkRecord, 'id' | 'crawlId' | 'depth' | 'url'>;
  finalUrl: string;
  contentType: string | null;
  httpStatus: number;
  /** Decoded body; discovery reads HTML and XML (feeds). */
  text: string | null;
  /**
   * The encoding the document was read in: the charset `text` was decoded from, or a browser's `document.characterSet`
   * (its rendered `text` is UTF-8 whatever the site sent). A link's non-ASCII query is percent-encoded in it, as
   * browsers do. @defaultValue UTF-8
   */
  charset?: string;
  /** Response headers, lower-case names (an `X-Robots-Tag: nofollow` is read as the robots meta is). */
  headers?: Record<string, string>;
}

/** Where discovered pages go after a stored page: the fetch worker's hook. */
export interface LinkDiscovery {
  /**
   * Admit the page's links to its crawl. `offScope` (the URL it landed on) when a page the crawl found was redirected
   * off the crawl's scope: not the crawl's page (it is counted out of scope, `scope`), and none of its links followed.
   */
  discover(page: DiscoveredPage): Promise<DiscoveryVerdict>;
}

export interface DiscoveryVerdict {
  offScope: string | null;
}

const IN_SCOPE: DiscoveryVerdict = { offScope: null };

interface CompiledCrawl {
  record: CrawlRecord;
  scope: ScopeMatcher;
  tracking: TrackingParamFilter;
}

export interface CrawlFrontierDeps {
  store: CrawlStore;
  enqueueRoutes(inputs: RouteJobInput[]): Promise<unknown>;
  /** How long creating a crawl waits for Redis to take its seeds' jobs before deferring them. @defaultValue ENQUEUE_WAIT_MS */
  enqueueWaitMs?: number;
  /** Sitemap and robots.txt reads (plain HTTP with the fetchers' guards); without it `sitemaps` is refused. */
  fetchSitemap?: SitemapFetch;
  sitemapLimits?: Partial<SitemapLimits>;
  logger: Logger;
  /** Largest number of links one page contributes. @defaultValue 5000 */
  maxLinksPerPage?: number;
  /** Tracking parameters of a crawl whose spec names none. @defaultValue DEFAULT_TRACKING_PARAMS */
  defaultTrackingParams?: string[];
  /** Keys already decided, answered without Postgres (see SeenCache). @defaultValue none: every key goes to Postgres */
  seenCache?: SeenCache;
  /** Shortest revisit interval a crawl may ask for, seconds (REVISIT_MIN_INTERVAL_S). @defaultValue 60 */
  minRevisitIntervalSeconds?: number;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** XML that may be a feed (RSS, Atom, RSS 1.0 are served under all of these) or a page labelled XML. */
function isXmlType(mime: string): boolean {
  return mime === 'application/xml' || mime === 'text/xml' || mime.endsWith('+xml');
}
/** JSON that may be a JSON Feed: served as application/feed+json, or as plain JSON as many sites do. */
function isJsonType(mime: string): boolean {
  return mime === 'application/feed+json' || mime === 'application/json';
}
/** Compiled crawls kept per process; a crawl's rules never change, so entries only leave to bound memory. */
const MAX_CACHED_CRAWLS = 1_000;

/**
 * The crawl's side of the pipeline: creates crawls (seeds, sitemaps), and after a page of a crawl is fetched,
 * extracts its links, applies the crawl's rules that need no shared state (nofollow, scope, include/exclude,
 * depth) and hands the rest to the store's atomic admission; admitted links get their route jobs, so they go
 * through the same router as any other link.
 */
/** Largest maxDepth, maxPages and maxPagesPerHost a crawl may have: they are stored as Postgres integers. */
export const MAX_CRAWL_LIMIT = 2_147_483_647;

export class CrawlFrontier implements LinkDiscovery {
  readonly #deps: CrawlFrontierDeps;
  readonly #compiled = new Map<string, Promise<CompiledCrawl | null>>();

  constructor(deps: CrawlFrontierDeps) {
    this.#deps = deps;
  }

  async create(spec: CrawlSpec): Promise<CreatedCrawl> {
    const scope = spec.scope ?? 'same-site';
    if (!CRAWL_SCOPES.includes(scope)) throw new CrawlSpecError('scope', `scope must be one of ${CRAWL_SCOPES.join(', ')}, got ${JSON.stringify(scope)}`);
    // The crawls table keeps them as Postgres integers: a larger value would fail the insert as a database error.
    for (const [field, v] of [['maxDepth', spec.maxDepth], ['maxPages', spec.maxPages], ['maxPagesPerHost', spec.maxPagesPerHost]] as const) {
      if (v !== undefined && v !== null && (!Number.isInteger(v) || v < (field === 'maxDepth' ? 0 : 1) || v > MAX_CRAWL_LIMIT)) {
        throw new CrawlSpecError(field, `${field} must be an integer from ${field === 'maxDepth' ? 0 : 1} to ${MAX_CRAWL_LIMIT}, got ${v}`);
      }
    }
    let maxAgeSeconds: number | null = null;
    let revisit = null;
    try {
      if (spec.maxAgeSeconds !== undefined && spec.maxAgeSeconds !== null) maxAgeSeconds = checkMaxAgeSeconds(spec.maxAgeSeconds);
      if (spec.revisit) revisit = checkRevisitPolicy(spec.revisit, this.#deps.minRevisitIntervalSeconds ?? 60);
    } catch (err) {
      if (err instanceof ScheduleInputError) throw new CrawlSpecError(err.field, err.message);
      throw err;
    }
    const trackingParams = spec.trackingParams ?? this.#deps.defaultTrackingParams ?? null;
    const tracking = compileTrackingParams(trackingParams ?? DEFAULT_TRACKING_PARAMS);
    const rejected: RejectedLink[] = [];
    const seeds: string[] = [];
    for (const input of spec.seeds) {
      const url = canonicalCrawlUrl(input, undefined, tracking);
      if (url === null) rejected.push({ input, code: 'invalid_url', message: `not a crawlable http(s) URL: ${input.slice(0, 200)}` });
      else if (!seeds.includes(url)) seeds.push(url);
    }
    if (seeds.length === 0) throw new CrawlSpecError('seeds', 'no crawlable seed URL');
    // Each pattern on its own first, so an error names the list it is in.
    for (const field of ['include', 'exclude'] as const) {
      for (const pattern of spec[field] ?? []) {
        try {
          compileUrlPattern(pattern);
        } catch (err) {
          throw new CrawlSpecError(field, (err as Error).message);
        }
      }
    }
    let matcher: ScopeMatcher;
    try {
      matcher = compileScope({ scope, seeds, include: spec.include, exclude: spec.exclude });
    } catch (err) {
      throw new CrawlSpecError('scope', (err as Error).message);
    }
    const record = {
      seeds, scope, include: spec.include ?? [], exclude: spec.exclude ?? [], maxDepth: spec.maxDepth ?? null, maxPages: spec.maxPages ?? null,
      maxPagesPerHost: spec.maxPagesPerHost ?? null, followNofollow: spec.followNofollow ?? false, trackingParams, sitemaps: spec.sitemaps ?? false,
      maxAgeSeconds, revisit,
    };

    // Seeds are admitted whatever include/exclude say (they were asked for by name); sitemap entries obey every rule.
    const candidates: FrontierCandidate[] = seeds.map((url) => candidateOf(url, 0));
    let discovered = seeds.length;
    const refused = new OutOfScopeTally();
    let sitemaps: SitemapReport | undefined;
    if (record.sitemaps) {
      if (!this.#deps.fetchSitemap) throw new CrawlSpecError('sitemaps', 'this process cannot read sitemaps');
      sitemaps = await readSitemaps(seeds, { fetch: this.#deps.fetchSitemap, limits: this.#deps.sitemapLimits, logger: this.#deps.logger, tracking });
      for (const url of sitemaps.urls) {
        discovered += 1;
        const reason = matcher.check(url);
        if (reason !== null) refused.add(reason, url);
        else candidates.push(candidateOf(url, 0));
      }
    }
    const tally = { discovered, overLimit: 0, ...refused.tally() };
    const { crawl, admitted } = await this.#deps.store.create(record, () => ({ candidates, tally }));
    this.#compiled.set(crawl.id, Promise.resolve({ record: crawl, scope: matcher, tracking }));
    // The crawl exists from here on: a Redis that cannot take the seeds' jobs now defers them, it does not fail the
    // call (the producer would create the crawl a second time).
    const jobs = new RouteJobAdder((inputs) => this.#deps.enqueueRoutes(inputs), this.#deps.enqueueWaitMs);
    await jobs.add(admitted);
    return { crawl, admitted: admitted.length, rejected, sitemaps, ...(jobs.deferredReason !== undefined ? { deferred: { links: jobs.deferred.size, reason: jobs.deferredReason } } : {}) };
  }

  /**
   * Read a stored crawl's sitemaps again, as its creation read them (the same seeds, limits and tracking parameters),
   * for the sitemap re-read of a continuous crawl; with `previous`, conditionally (see readSitemaps). Null when this
   * process cannot read sitemaps.
   */
  async readCrawlSitemaps(crawl: { seeds: string[]; trackingParams: string[] | null }, previous?: ReadonlyMap<string, SitemapFileState>): Promise<SitemapReport | null> {
    if (!this.#deps.fetchSitemap) return null;
    const tracking = compileTrackingParams(crawl.trackingParams ?? DEFAULT_TRACKING_PARAMS);
    return readSitemaps(crawl.seeds, { fetch: this.#deps.fetchSitemap, limits: this.#deps.sitemapLimits, logger: this.#deps.logger, tracking, ...(previous ? { previous } : {}) });
  }

  /**
   * Admit to a running crawl the pages a re-read of its sitemaps lists that the crawl has not decided on yet, as its
   * creation admits sitemap entries: depth 0, every scope, include and exclude rule, then the store's admission with
   * its page budget and per-host caps, and route jobs for the admitted. Pages the crawl already has (or refused by a
   * limit) are not offered at all: a known page is the lastmod pull's to make due, and offering it would count it a
   * duplicate at every re-read; out-of-scope entries are left uncounted for the same reason (creation counted them).
   * At most `maxLinks` new pages, in sitemap order; `more` says some were left for the next re-read.
   */
  async admitSitemapUrls(crawlId: string, urls: readonly string[], maxLinks: number): Promise<SitemapAdmission> {
    const none: SitemapAdmission = { admitted: 0, offered: 0, outOfScope: 0, more: false };
    if (urls.length === 0) return none;
    // Read afresh, not from #compiled: a seed another process added (a redirect) widens the scope.
    const record = await this.#deps.store.get(crawlId);
    if (!record || record.status !== 'running') return none;
    const scope = compileScope({ scope: record.scope, seeds: record.seeds, include: record.include, exclude: record.exclude });
    let outOfScope = 0;
    const byKey = new Map<string, FrontierCandidate>();
    for (const url of urls) {
      if (scope.check(url) !== null) outOfScope += 1;
      else {
        const c = candidateOf(url, 0);
        if (!byKey.has(c.key)) byKey.set(c.key, c);
      }
    }
    const decided = await this.#deps.store.decidedKeys(crawlId, [...byKey.keys()]);
    const unknown = [...byKey.values()].filter((c) => !decided.has(c.key));
    const candidates = unknown.slice(0, Math.max(0, maxLinks));
    const more = unknown.length > candidates.length;
    if (candidates.length === 0) return { ...none, outOfScope, more };
    const result = await this.#deps.store.admit({ crawlId, discoveredFrom: null, candidates, tally: { discovered: candidates.length, outOfScope: 0, overLimit: 0 } });
    await this.#route(result.admitted);
    if (this.#deps.seenCache && !result.closed) await this.#deps.seenCache.remember(crawlId, candidates.map((c) => c.key)).catch(() => undefined);
    return { admitted: result.admitted.length, offered: candidates.length, outOfScope, more };
  }

  async discover(page: DiscoveredPage): Promise<DiscoveryVerdict> {
    const crawlId = page.link.crawlId;
    if (!crawlId) return IN_SCOPE;
    // A 3xx that reached here was not followed by the fetcher (a 300 Multiple Choices, a 305): its Location is where
    // the server sends a client, so it is a link of the page, as a Refresh header's URL is.
    const location = page.httpStatus >= 300 && page.httpStatus < 400 ? page.headers?.['location'] : undefined;
    // A 404 or 500 page's links are the error page's navigation, not the site's: only a 2xx page's body is followed.
    const body = page.text !== null && page.httpStatus >= 200 && page.httpStatus < 300 ? page.text : null;
    // No Content-Type at all is read as HTML: such servers are nearly always sending HTML. XML is read by its root
    // element: a feed, or a page labelled XML; so is "HTML" that starts as a feed (a script that never set its type).
    const mime = mimeOf(page.contentType ?? undefined);
    const reading = body === null ? null : mime === '' || HTML_TYPES.has(mime) ? (looksLikeFeed(body) ? 'xml' : 'html') : isXmlType(mime) ? 'xml' : isJsonType(mime) ? 'json' : null;
    const redirected = page.finalUrl !== page.link.url;
    if (reading === null && location === undefined && !redirected) return IN_SCOPE;
    const compiled = await this.#compile(crawlId);
    if (!compiled || compiled.record.status !== 'running') return IN_SCOPE;
    const finalUrl = canonicalCrawlUrl(page.finalUrl, undefined, compiled.tracking);
    if (finalUrl === null) return IN_SCOPE;
    // A page that redirected off the crawl's scope is not the crawl's (Crawlee and Scrapy drop it too), unless it was a
    // seed's redirect (see #widen): counted out of scope, with the URL it landed on among the samples.
    if (compiled.scope.check(finalUrl) === 'scope' && !(await this.#widen(compiled, page.link.url, finalUrl))) {
      const refused = new OutOfScopeTally();
      refused.add('scope', finalUrl);
      await this.#deps.store.admit({ crawlId, discoveredFrom: page.link.id, candidates: [], alsoSeen: [], tally: { discovered: 0, overLimit: 0, overDepth: 0, duplicate: 0, ...refused.tally() } });
      return { offScope: finalUrl };
    }
    if (reading === null && location === undefined) return IN_SCOPE;
    const { tracking } = compiled;
    const refresh = page.headers?.['refresh'];
    // A seed is the page it lands on: an HTTP redirect the fetcher followed is this page already, while a refresh (meta
    // or header) or a 300's Location is a link the crawl fetches next. That landing page, when in scope, is the seed's
    // as a browser would have shown it: depth 0 (so its own feed is followed), whatever include/exclude say. One hop:
    // the landing page is not a seed, so a refresh of its own is an ordinary link.
    const isSeed = (page.link.depth ?? 0) === 0 && compiled.record.seeds.includes(page.link.url);
    // A page's own feed (`<link rel=alternate>`) is followed from a seed (or its landing page) only: a front page
    // names the site's feed, while a blog engine gives every post a comments feed that would double the crawl.
    const options = {
      trackingParams: tracking, maxLinks: this.#deps.maxLinksPerPage, feeds: (page.link.depth ?? 0) === 0,
      ...(refresh === undefined ? {} : { refreshHeader: refresh }),
      ...(page.charset === undefined ? {} : { charset: page.charset }),
    };
    const extracted: PageLinks = body === null || reading === null
      ? { links: [], canonical: null, nofollowAll: false, truncated: 0 }
      : reading === 'xml' ? extractXmlLinks(body, page.finalUrl, options)
      // JSON that is not a JSON Feed (an API's answer) has no links to follow.
      : reading === 'json' ? (extractJsonFeedLinks(body, page.finalUrl, options) ?? { links: [], canonical: null, nofollowAll: false, truncated: 0 })
      : extractLinks(body, page.finalUrl, options);
    const target = location === undefined ? null : canonicalCrawlUrl(location, page.finalUrl, tracking);
    if (target !== null) extracted.links.unshift({ url: target, nofollow: false });
    const landing = isSeed ? (target ?? extracted.refresh ?? null) : null;
    // A seed whose refresh or 300 sends the reader off scope (a site that moved: `<meta http-equiv=refresh
    // content="0; url=https://new.example/">`) moved as one that redirects does: where it sends is a seed too (#widen),
    // so the crawl goes on there instead of stopping at a page that only says "this site has moved".
    if (landing !== null && compiled.scope.check(landing) === 'scope') await this.#widen(compiled, page.link.url, landing);
    const { record, scope } = compiled;
    const depth = (page.link.depth ?? 0) + 1;
    const nofollowAll = robotsHeaderNofollow(page.headers?.['x-robots-tag']);
    let overDepth = 0;
    const refused = new OutOfScopeTally();
    const candidates: FrontierCandidate[] = [];
    for (const link of extracted.links) {
      if (link.url === landing && scope.check(landing) !== 'scope') {
        candidates.push(candidateOf(link.url, 0));
        continue;
      }
      const reason = refusalOf(scope, link.url, (link.nofollow || nofollowAll) && !record.followNofollow);
      if (reason !== null) refused.add(reason, link.url);
      else if (record.maxDepth !== null && depth > record.maxDepth) overDepth += 1;
      else candidates.push(candidateOf(link.url, depth));
    }
    const tally = { discovered: extracted.links.length, overLimit: overDepth, overDepth, ...refused.tally() };
    // rel=canonical naming another in-scope page: this page's content is that page's, so the crawl counts it as seen.
    const alsoSeen: AdmitRequest['alsoSeen'] = [];
    if (extracted.canonical !== null && frontierKey(extracted.canonical) !== frontierKey(finalUrl) && scope.check(extracted.canonical) === null) {
      alsoSeen.push({ key: frontierKey(extracted.canonical), host: new URL(extracted.canonical).hostname });
    }
    // A redirect's target (/old -> /new, http:// -> https://) was fetched as this page: a link to it found later is this page again.
    if (frontierKey(finalUrl) !== frontierKey(page.link.url) && scope.check(finalUrl) === null) {
      alsoSeen.push({ key: frontierKey(finalUrl), host: new URL(finalUrl).hostname });
    }
    if (candidates.length === 0 && alsoSeen.length === 0 && tally.discovered === 0) return IN_SCOPE;
    let offered = candidates;
    let duplicate = 0;
    const cache = this.#deps.seenCache;
    if (cache && candidates.length > 0) {
      // A cache failure only costs the shortcut: every key then goes to Postgres.
      const known = await cache.known(crawlId, candidates.map((c) => c.key)).catch(() => null);
      if (known) {
        offered = candidates.filter((_, i) => !known[i]);
        duplicate = candidates.length - offered.length;
      }
    }
    const result = await this.#deps.store.admit({ crawlId, discoveredFrom: page.link.id, candidates: offered, alsoSeen, tally: { ...tally, duplicate } });
    if (result.closed) compiled.record = { ...record, status: 'cancelled' };
    await this.#route(result.admitted);
    // Committed: every key offered is now decided in Postgres.
    if (cache && !result.closed) await cache.remember(crawlId, [...offered.map((c) => c.key), ...alsoSeen.map((s) => s.key)]).catch(() => undefined);
    return IN_SCOPE;
  }

  /**
   * A seed that redirects (http://example.com/ to https://www.example.com/, a short link to its article) makes where
   * it landed a seed of the crawl too, as Heritrix does: otherwise a crawl of a site that moved to another host or
   * scheme stops at its first page. Stored with the crawl, so every process's scope agrees: any other page that
   * landed off scope reads the crawl's seeds again, in case another process added one since it compiled them. True
   * when `finalUrl` is in scope now.
   */
  async #widen(compiled: CompiledCrawl, linkUrl: string, finalUrl: string): Promise<boolean> {
    const { record } = compiled;
    const seeds = record.seeds.includes(linkUrl)
      ? await this.#deps.store.addSeed(record.id, finalUrl)
      : ((await this.#deps.store.get(record.id))?.seeds ?? null);
    if (seeds === null || seeds.length === record.seeds.length) return false;
    compiled.record = { ...record, seeds };
    compiled.scope = compileScope({ scope: record.scope, seeds, include: record.include, exclude: record.exclude });
    return compiled.scope.check(finalUrl) !== 'scope';
  }

  async #route(admitted: Array<{ linkId: string; url: string; generation?: number }>): Promise<void> {
    for (let i = 0; i < admitted.length; i += 1_000) await this.#deps.enqueueRoutes(admitted.slice(i, i + 1_000));
  }

  #compile(crawlId: string): Promise<CompiledCrawl | null> {
    let entry = this.#compiled.get(crawlId);
    if (!entry) {
      if (this.#compiled.size >= MAX_CACHED_CRAWLS) this.#compiled.clear();
      entry = this.#deps.store.get(crawlId).then((record) => {
        if (!record) return null;
        return {
          record,
          scope: compileScope({ scope: record.scope, seeds: record.seeds, include: record.include, exclude: record.exclude }),
          tracking: compileTrackingParams(record.trackingParams ?? DEFAULT_TRACKING_PARAMS),
        };
      });
      // A failed read is not cached: the next page asks again.
      entry.catch(() => this.#compiled.delete(crawlId));
      this.#compiled.set(crawlId, entry);
    }
    return entry;
  }
}

function candidateOf(url: string, depth: number): FrontierCandidate {
  return { url, key: frontierKey(url), host: new URL(url).hostname, domain: domainOf(url), initialUrl: url, depth };
}
