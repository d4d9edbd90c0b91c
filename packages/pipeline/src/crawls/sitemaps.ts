import { gunzipSync } from 'node:zlib';
import { canonicalCrawlUrl, extractXmlLinks, parseSitemap, sitemapsFromRobots, type Logger, type TrackingParamFilter } from '@crawler/core';

/**
 * One GET for a sitemap or robots.txt, with extra request headers (the conditional ones of a re-read): status, raw
 * body (a .xml.gz arrives still gzipped) and response headers (lower-case names). Throws on failure.
 */
export type SitemapFetch = (url: string, headers?: Record<string, string>) => Promise<{ status: number; body: Uint8Array; headers?: Record<string, string> }>;

/**
 * What one file (a sitemap, an index, robots.txt) said at its last full read: its validators, sent back as
 * `If-None-Match` / `If-Modified-Since`, and the sitemap files it pointed to (an index's children, robots.txt's
 * `Sitemap:` lines), which are read again when it answers 304.
 */
export interface SitemapFileState {
  etag?: string;
  lastModified?: string;
  /** Sitemap files this one named, in its order. */
  children: string[];
}

/** Bounds of one sitemap read: a hostile or huge sitemap costs at most this much. */
export interface SitemapLimits {
  /** Sitemap files read (indexes included) per crawl. @defaultValue 50 */
  maxFiles: number;
  /** Bytes of one sitemap after gunzip (the protocol's own limit is 50 MB). @defaultValue 52_428_800 */
  maxBytes: number;
  /** Page URLs taken from all sitemaps together. @defaultValue 50_000 */
  maxUrls: number;
}

export const DEFAULT_SITEMAP_LIMITS: SitemapLimits = { maxFiles: 50, maxBytes: 50 * 1024 * 1024, maxUrls: 50_000 };

/** What a sitemap read found. */
export interface SitemapReport {
  /** Page URLs, canonical, deduplicated, in reading order. */
  urls: string[];
  /** Sitemap files read successfully. */
  files: string[];
  /** Files that could not be read, with why. */
  errors: Array<{ url: string; error: string }>;
  /** Whether a limit cut the read short. */
  truncated: boolean;
  /** `<lastmod>` of the page URLs that have one (canonical URL → epoch ms), the latest where a URL is listed twice. */
  lastModified: Map<string, number>;
  /** Files (robots.txt included) that answered 304 to a conditional read: unchanged, so none of their pages are in `urls`. */
  unchanged?: string[];
  /** Per file that sent a validator (or answered 304), what to send back next time: see {@link SitemapFileState}. */
  fileStates?: Map<string, SitemapFileState>;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/** A URL whose file name says sitemap (`/sitemap.xml`, `/maps/sitemap_index.xml`, `/sitemap-posts.xml.gz`). */
export function looksLikeSitemap(url: string): boolean {
  return /\/[^/]*sitemap[^/]*\.xml(?:\.gz)?$/i.test(new URL(url).pathname);
}

/**
 * Read the sitemaps of the seeds' origins: the `Sitemap:` lines of each origin's robots.txt, or `/sitemap.xml` when
 * it has none (a seed that is itself a sitemap, by its file name, is read instead of its origin's); sitemap indexes are followed breadth-first, an RSS or Atom feed gives its entries, gzipped files (by
 * their magic bytes, whatever the URL or headers say) are inflated with a size cap. Never throws for a bad sitemap: it
 * lands in `errors`.
 *
 * With `previous` (the `fileStates` of an earlier read) each file it knows is asked conditionally; a 304 means the
 * file has not changed: its pages are not listed again, and the files it pointed to are asked (conditionally too), so
 * an unchanged index whose children change is still followed at one request per file.
 */
export async function readSitemaps(
  seeds: readonly string[],
  opts: { fetch: SitemapFetch; limits?: Partial<SitemapLimits>; logger: Logger; tracking?: TrackingParamFilter; previous?: ReadonlyMap<string, SitemapFileState> },
): Promise<SitemapReport> {
  const limits: SitemapLimits = { ...DEFAULT_SITEMAP_LIMITS };
  for (const [k, v] of Object.entries(opts.limits ?? {}) as Array<[keyof SitemapLimits, number | undefined]>) if (v !== undefined) limits[k] = v;
  const report: SitemapReport = { urls: [], files: [], errors: [], truncated: false, lastModified: new Map() };
  const conditional = opts.previous !== undefined;
  const unchanged: string[] = [];
  const fileStates = new Map<string, SitemapFileState>();
  if (conditional) {
    report.unchanged = unchanged;
    report.fileStates = fileStates;
  }
  // One GET, conditional when an earlier read left validators; 'unchanged' on a 304 to them (the file's remembered
  // state carries over, with any validator the 304 updated).
  const get = async (url: string): Promise<{ status: number; body: Uint8Array; unchanged: boolean }> => {
    const before = opts.previous?.get(url);
    const headers: Record<string, string> = {};
    if (before?.etag) headers['if-none-match'] = before.etag;
    if (before?.lastModified) headers['if-modified-since'] = before.lastModified;
    const res = await (Object.keys(headers).length > 0 ? opts.fetch(url, headers) : opts.fetch(url));
    const etag = res.headers?.['etag'];
    const lastModified = res.headers?.['last-modified'];
    if (res.status === 304 && before && Object.keys(headers).length > 0) {
      unchanged.push(url);
      fileStates.set(url, { ...before, ...(etag ? { etag } : {}), ...(lastModified ? { lastModified } : {}) });
      return { ...res, unchanged: true };
    }
    if (conditional && res.status >= 200 && res.status < 300 && (etag || lastModified)) fileStates.set(url, { ...(etag ? { etag } : {}), ...(lastModified ? { lastModified } : {}), children: [] });
    return { ...res, unchanged: false };
  };
  const seenUrls = new Set<string>();
  const queue: string[] = [];
  const queued = new Set<string>();
  const push = (u: string): void => {
    if (!queued.has(u)) {
      queued.add(u);
      queue.push(u);
    }
  };
  // A seed that names a sitemap is the sitemap the user means: it is read, and its origin's are not looked for.
  const named = seeds.filter(looksLikeSitemap);
  for (const s of named) push(s);
  const namedOrigins = new Set(named.map((s) => new URL(s).origin));
  for (const origin of new Set(seeds.map((s) => new URL(s).origin))) {
    if (namedOrigins.has(origin)) continue;
    let listed: string[] = [];
    const robotsUrl = `${origin}/robots.txt`;
    try {
      const res = await get(robotsUrl);
      if (res.unchanged) listed = opts.previous?.get(robotsUrl)?.children ?? [];
      else if (res.status >= 200 && res.status < 300) listed = sitemapsFromRobots(new TextDecoder().decode(res.body.subarray(0, 512 * 1024)), robotsUrl);
      const state = fileStates.get(robotsUrl);
      if (state) state.children = listed;
    } catch (err) {
      opts.logger.debug({ err, origin }, 'robots.txt unreadable for sitemaps');
    }
    for (const u of listed.length > 0 ? listed : [`${origin}/sitemap.xml`]) push(u);
  }
  while (queue.length > 0) {
    if (report.files.length + report.errors.length + unchanged.length >= limits.maxFiles) {
      report.truncated = true;
      break;
    }
    const url = queue.shift()!;
    let xml: string;
    try {
      const res = await get(url);
      if (res.unchanged) {
        for (const child of opts.previous?.get(url)?.children ?? []) push(child);
        continue;
      }
      if (res.status < 200 || res.status >= 300) throw new Error(`HTTP ${res.status}`);
      let body = res.body;
      if (body[0] === GZIP_MAGIC[0] && body[1] === GZIP_MAGIC[1]) body = gunzipSync(body, { maxOutputLength: limits.maxBytes });
      if (body.byteLength > limits.maxBytes) throw new Error(`larger than ${limits.maxBytes} bytes`);
      xml = new TextDecoder().decode(body);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      report.errors.push({ url, error: error.includes('maxOutputLength') || error.includes('Cannot create a Buffer') ? `inflates beyond ${limits.maxBytes} bytes` : error });
      // Unreadable: no state, so the next read asks for it in full.
      fileStates.delete(url);
      continue;
    }
    report.files.push(url);
    let entries = parseSitemap(xml, { maxEntries: limits.maxUrls, baseUrl: url });
    if (entries.urls.length === 0 && entries.sitemaps.length === 0) {
      // An RSS or Atom feed is a sitemap too, for the search engines that read them (and the sites that list one in
      // robots.txt): its entries are the pages.
      const feed = extractXmlLinks(xml, url, { maxLinks: limits.maxUrls, ...(opts.tracking ? { trackingParams: opts.tracking } : {}) });
      if (feed.kind === 'feed') entries = { urls: feed.links.map((l) => l.url), sitemaps: [], truncated: feed.truncated, lastModified: new Map() };
    }
    for (const s of entries.sitemaps) push(s);
    const state = fileStates.get(url);
    if (state) state.children = [...entries.sitemaps];
    for (const raw of entries.urls) {
      const u = opts.tracking ? canonicalCrawlUrl(raw, undefined, opts.tracking) : raw;
      if (u === null) continue;
      const lastmod = entries.lastModified.get(raw);
      if (lastmod !== undefined && lastmod > (report.lastModified.get(u) ?? -Infinity)) report.lastModified.set(u, lastmod);
      if (seenUrls.has(u)) continue;
      if (report.urls.length >= limits.maxUrls) {
        report.truncated = true;
        break;
      }
      seenUrls.add(u);
      report.urls.push(u);
    }
    if (entries.truncated > 0) report.truncated = true;
  }
  return report;
}
