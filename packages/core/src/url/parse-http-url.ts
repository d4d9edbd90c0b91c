import { InvalidUrlError } from '../contracts/errors.js';

/** Schemes the crawler fetches; anything else is an invalid URL for us. */
const FETCHABLE_PROTOCOLS = new Set(['http:', 'https:']);

/**
 * Parse a crawlable absolute URL with the WHATWG parser (the same one undici and browsers use, so our idea of
 * "the same URL" matches theirs). Throws InvalidUrlError for anything unparsable, relative, non-http(s) or host-less.
 */
export function parseHttpUrl(raw: string): URL {
  if (typeof raw !== 'string') throw new InvalidUrlError(`URL must be a string, got ${typeof raw}`);
  const trimmed = raw.trim();
  if (trimmed === '') throw new InvalidUrlError('URL is empty');
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch (cause) {
    throw new InvalidUrlError(`unparsable URL: ${truncate(trimmed)}${guessOf(trimmed)}`, { url: trimmed, cause });
  }
  if (!FETCHABLE_PROTOCOLS.has(parsed.protocol)) {
    throw new InvalidUrlError(`unsupported scheme ${parsed.protocol.replace(/:$/, '')} (only http and https)${guessOf(trimmed)}`, { url: trimmed });
  }
  if (parsed.hostname === '') throw new InvalidUrlError('URL has no host', { url: trimmed });
  return parsed;
}

/** `host[:port]` then a path, query, fragment or the end: a URL written without its scheme. */
const SCHEMELESS = /^(?:localhost|\[[0-9a-f:.]+\]|[a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::\d{1,5})?(?:[/?#]|$)/i;

/** A file name, not a host: `urls.txt` is a list of URLs that is not there, not the site https://urls.txt. */
const LIST_FILE = /^[^/?#]*\.(?:txt|csv|tsv|json|jsonl|ndjson|list|lst|log|md)$/i;

/**
 * What the writer of a refused URL most likely meant, as a suffix for its message ('' when there is no good guess):
 * `example.com/a` and `127.0.0.1:8080/` lack a scheme (the WHATWG parser fails on the second and reads
 * `localhost:8080` as a scheme of that name), `http//example.com` lacks the colon.
 */
function guessOf(raw: string): string {
  if (raw.length > 200) return '';
  const colonless = /^(https?)\/\/(?!\/)(\S+)$/i.exec(raw);
  if (colonless) return ` (did you mean ${colonless[1]}://${colonless[2]}?)`;
  if (!raw.includes('://') && SCHEMELESS.test(raw) && !LIST_FILE.test(raw) && !/\s/.test(raw)) return ` (no scheme: did you mean https://${raw}?)`;
  return '';
}

function truncate(s: string): string {
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}
