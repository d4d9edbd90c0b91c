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
    throw new InvalidUrlError(`unparsable URL: ${truncate(trimmed)}`, { url: trimmed, cause });
  }
  if (!FETCHABLE_PROTOCOLS.has(parsed.protocol)) {
    throw new InvalidUrlError(`unsupported scheme ${parsed.protocol.replace(/:$/, '')} (only http and https)`, { url: trimmed });
  }
  if (parsed.hostname === '') throw new InvalidUrlError('URL has no host', { url: trimmed });
  return parsed;
}

function truncate(s: string): string {
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}
