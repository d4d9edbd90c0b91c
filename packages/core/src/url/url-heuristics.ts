import type { Heuristic } from '../contracts/names.js';
import { parseHttpUrl } from './parse-http-url.js';
import { domainOf } from './normalize-url.js';

/** One pre-fetch feature. `extract` returns the value to record, or null when the feature is absent. */
export interface UrlHeuristicExtractor {
  /** The heuristic_type stored with attempts. */
  type: string;
  extract(url: URL, parts: UrlParts): string | null;
}

/** Pieces of a parsed URL that several extractors need, computed once. */
export interface UrlParts {
  domain: string;
  /** Lower-case host labels, e.g. ["cdn", "example", "com"]. */
  hostLabels: string[];
  /** Non-empty, percent-decoded, lower-case path segments (matrix parameters after ";" removed). */
  segments: string[];
  /** The last path segment as in `segments`; empty when the path ends with "/". */
  fileName: string;
  /** The query without its "?", as sent. */
  query: string;
}

/** Paths deeper than this many segments count as `deep_path`. */
export const DEEP_PATH_MIN_SEGMENTS = 6;
/** Queries longer than this many characters count as `complex_query`. */
export const COMPLEX_QUERY_MIN_LENGTH = 51;

/** Sites whose pages are video players; matched on the domain and its subdomains. */
export const VIDEO_PLATFORM_DOMAINS: readonly string[] = [
  'youtube.com', 'youtu.be', 'youtube-nocookie.com', 'vimeo.com', 'dailymotion.com', 'dai.ly', 'twitch.tv',
  'tiktok.com', 'rumble.com', 'bilibili.com', 'nicovideo.jp', 'streamable.com', 'wistia.com', 'odysee.com',
  'bitchute.com', 'loom.com',
];

/** The `section` heuristic's type. */
export const SECTION_HEURISTIC = 'section';
/**
 * A section's first path segment is cut to this many characters: the value is indexed with the attempt, and a btree
 * entry has a size limit (~2.7 kB) that a pathological slug must not reach.
 */
export const SECTION_SEGMENT_MAX_CHARS = 200;

/**
 * The section of a site a URL belongs to: its domain and first path segment ("example.com/blog"), or null for the
 * site's root. Sites mix kinds by section (an app under /app, static articles under /blog, a walled /checkout), so
 * the router scores a section with enough attempts of its own apart from the rest of its domain.
 */
export function sectionOf(parts: Pick<UrlParts, 'domain' | 'segments'>): string | null {
  const first = parts.segments[0];
  return first === undefined ? null : `${parts.domain}/${first.slice(0, SECTION_SEGMENT_MAX_CHARS)}`;
}

/** {@link sectionOf} for a URL string; null for the root or a URL that does not parse. */
export function sectionOfUrl(url: string): string | null {
  try {
    return sectionOf(describeUrl(parseHttpUrl(url)));
  } catch {
    return null;
  }
}

/** A file extension is short and alphanumeric; "/2024.03.story-title" has none worth learning from. */
const EXTENSION = /^[a-z0-9]{1,8}$/;

function hasSegmentOrSubdomain(parts: UrlParts, names: readonly string[], labelPrefix?: RegExp): boolean {
  if (parts.segments.some((s) => names.includes(s))) return true;
  // Only subdomain labels count: "api.github.com" is an API host, "cdn.com" is just a domain called cdn.
  const subLabels = parts.hostLabels.slice(0, -2);
  return subLabels.some((l) => names.includes(l) || (labelPrefix?.test(l) ?? false));
}

function flag(present: boolean): string | null {
  return present ? 'true' : null;
}

/**
 * Every pre-fetch heuristic, in the order they are recorded. Adding a heuristic means adding one entry here:
 * the store and the selection query treat heuristic types as open-ended text.
 */
export const URL_HEURISTIC_EXTRACTORS: readonly UrlHeuristicExtractor[] = [
  { type: 'domain', extract: (_u, p) => p.domain },
  { type: SECTION_HEURISTIC, extract: (_u, p) => sectionOf(p) },
  {
    type: 'suffix',
    extract: (_u, p) => {
      const last = p.fileName;
      if (last === '') return null;
      const dot = last.lastIndexOf('.');
      // A leading dot is a hidden name (".well-known"), not an extension.
      if (dot <= 0) return null;
      const ext = last.slice(dot + 1);
      return EXTENSION.test(ext) ? `.${ext}` : null;
    },
  },
  { type: 'contains_cdn', extract: (_u, p) => flag(hasSegmentOrSubdomain(p, ['cdn'], /^cdn/)) },
  { type: 'contains_static', extract: (_u, p) => flag(hasSegmentOrSubdomain(p, ['static', '_static'])) },
  { type: 'contains_assets', extract: (_u, p) => flag(hasSegmentOrSubdomain(p, ['assets', '_assets'])) },
  { type: 'contains_api', extract: (_u, p) => flag(hasSegmentOrSubdomain(p, ['api'])) },
  { type: 'path_depth', extract: (_u, p) => String(p.segments.length) },
  { type: 'deep_path', extract: (_u, p) => flag(p.segments.length >= DEEP_PATH_MIN_SEGMENTS) },
  { type: 'complex_query', extract: (_u, p) => flag(p.query.length >= COMPLEX_QUERY_MIN_LENGTH) },
  {
    type: 'video_platform',
    extract: (_u, p) => flag(VIDEO_PLATFORM_DOMAINS.some((d) => p.domain === d || p.domain.endsWith(`.${d}`))),
  },
];

/** Split a parsed URL into the parts extractors share. */
export function describeUrl(url: URL): UrlParts {
  const domain = domainOf(url.href);
  const segments = url.pathname
    .split('/')
    .map((s) => safeDecode(s.split(';')[0] ?? '').toLowerCase())
    .filter((s) => s !== '');
  const rawLast = url.pathname.slice(url.pathname.lastIndexOf('/') + 1);
  const fileName = safeDecode(rawLast.split(';')[0] ?? '').toLowerCase();
  return { domain, hostLabels: url.hostname.toLowerCase().split('.').filter(Boolean), segments, fileName, query: url.search.replace(/^\?/, '') };
}

/**
 * The pre-fetch heuristics of a URL (known before any request), one per extractor that finds its feature.
 * Throws InvalidUrlError for a malformed or non-http(s) URL rather than silently returning nothing.
 */
export function extractUrlHeuristics(url: string, extractors: readonly UrlHeuristicExtractor[] = URL_HEURISTIC_EXTRACTORS): Heuristic[] {
  const parsed = parseHttpUrl(url);
  const parts = describeUrl(parsed);
  const out: Heuristic[] = [];
  for (const ex of extractors) {
    const value = ex.extract(parsed, parts);
    if (value !== null) out.push({ type: ex.type, value });
  }
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
