import type { Heuristic } from '../contracts/names.js';

/**
 * Extensions whose content is not an HTML page: plain HTTP gets them whole (no script to run, no visible text to
 * judge), so their evidence transfers across sites. A table, not code paths: adding a family is adding a line.
 */
export const NON_HTML_SUFFIXES: Readonly<Record<string, readonly string[]>> = {
  document: ['pdf', 'doc', 'docx', 'odt', 'rtf', 'xls', 'xlsx', 'ods', 'ppt', 'pptx', 'odp', 'epub', 'ps'],
  image: ['jpg', 'jpeg', 'png', 'gif', 'webp', 'avif', 'svg', 'ico', 'bmp', 'tif', 'tiff', 'heic'],
  video: ['mp4', 'webm', 'mkv', 'mov', 'avi', 'm4v', 'ogv', 'm3u8', 'mpd', 'ts'],
  audio: ['mp3', 'wav', 'ogg', 'oga', 'flac', 'aac', 'm4a', 'opus'],
  archive: ['zip', 'gz', 'tgz', 'bz2', 'xz', '7z', 'rar', 'tar', 'zst', 'dmg', 'iso', 'exe', 'msi', 'deb', 'rpm', 'apk', 'jar', 'whl'],
  data: ['json', 'xml', 'csv', 'tsv', 'txt', 'rss', 'atom', 'yaml', 'yml', 'ics', 'geojson', 'parquet', 'ndjson'],
  code: ['js', 'mjs', 'css', 'map', 'wasm'],
  font: ['woff', 'woff2', 'ttf', 'otf', 'eot'],
};

const NON_HTML = new Set(Object.values(NON_HTML_SUFFIXES).flatMap((exts) => exts.map((e) => `.${e}`)));

/**
 * The heuristic types the ROUTER asks `findBestFetcher` with; every extracted heuristic is still logged with each
 * attempt for analytics and importance scoring.
 *
 * Why not all of them: the store scores the DISTINCT attempts matching ANY queried heuristic, so
 * a heuristic every site shares pools the whole web. In the routing-quality benchmark (bench/README-routing.md,
 * 50 simulated sites) `path_depth=2` alone matched every site's pages: a domain's own 1–6 attempts were outvoted,
 * all sites went to one pooled winner (simple_http, then playwright, then playwright_stealth), 0.93 browser loads
 * per page against the oracle's 0.31, 1.26× the oracle's requests per page, 80 blocks. The same holds for
 * `deep_path`, `complex_query`, `contains_api/static/assets` and HTML-ish suffixes (`.html`, `.php`): they say little
 * about which tool a site needs. Kept: the `domain` itself; `suffix` only for non-HTML content families (a `.pdf` is
 * a `.pdf` on any host, the documents' own example); `contains_cdn` (CDN hosts serve files, not apps) and
 * `video_platform` (a curated list of sites that need a browser); and the `section` (the domain and first path
 * segment), which is narrower than the domain, never shared across sites: the router scores it on its own once it
 * has enough attempts (section-scope.ts) instead of adding it to the pooled query, whose union it would not change.
 */
export const ROUTING_HEURISTIC_TYPES: readonly string[] = ['domain', 'section', 'suffix', 'contains_cdn', 'video_platform'];

/** Whether a suffix value (".pdf") names a non-HTML content family. */
export function isNonHtmlSuffix(value: string): boolean {
  return NON_HTML.has(value.trim().toLowerCase());
}

/**
 * The subset of a URL's heuristics the router queries the learned store with: only `types`, and a `suffix` only
 * when it names non-HTML content. Pure; order is kept.
 */
export function selectRoutingHeuristics(heuristics: readonly Heuristic[], types: readonly string[] = ROUTING_HEURISTIC_TYPES): Heuristic[] {
  const wanted = new Set(types);
  return heuristics.filter((h) => wanted.has(h.type) && (h.type !== 'suffix' || isNonHtmlSuffix(h.value)));
}
