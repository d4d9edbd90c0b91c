/**
 * Which validators a revisit can send back, from the responses that carried the stored page. Pure: the version store
 * reads the responses, the fetch sends what this returns.
 */

/** One response that carried (or confirmed) the stored page, as its archived headers keep it. */
export interface ValidatorSource {
  /** Its `ETag` header, or null. */
  etag: string | null;
  /** Its `Last-Modified` header, or null. */
  lastModified: string | null;
  /** Its `Date` header, or null. */
  date: string | null;
  /** When we received it (the version's fetch time, the visit's time). */
  receivedAt: Date;
}

/** The validators to ask with: each null when there is none worth sending. */
export interface UsableValidators {
  etag: string | null;
  lastModified: string | null;
}

/**
 * A `Last-Modified` worth sending back as `If-Modified-Since`, or null. An unparseable one is not a date a server can
 * compare. One later than the response that carried it (its `Date`, else when we received it) comes from a wrong
 * clock or file time — RFC 9110 §8.8.2.1 forbids it — and is harmful: servers that answer "not modified unless the
 * page is newer than that" (express's `fresh`, Rails, Django) would answer 304 to every revisit until that future
 * date has passed, whatever the page became.
 */
export function usableLastModified(source: Pick<ValidatorSource, 'lastModified' | 'date' | 'receivedAt'>): string | null {
  if (!source.lastModified) return null;
  const modifiedMs = Date.parse(source.lastModified);
  if (Number.isNaN(modifiedMs)) return null;
  const dateMs = source.date ? Date.parse(source.date) : Number.NaN;
  const referenceMs = Number.isNaN(dateMs) ? source.receivedAt.getTime() : dateMs;
  return modifiedMs > referenceMs ? null : source.lastModified;
}

/**
 * The validators of the stored page as the server describes it now, from the responses that carried or confirmed it,
 * newest first: each validator from the newest response that has a usable one. A redeploy that changed every ETag
 * while the bodies stayed the same, or a 304 carrying a new ETag (RFC 9111 §4.3.4: a 304 updates the stored
 * headers), make the new ETag the one to ask with; the old one would never match again, and every revisit would
 * download the page in full for good.
 */
export function revisitValidators(sources: readonly ValidatorSource[]): UsableValidators {
  let etag: string | null = null;
  let lastModified: string | null = null;
  for (const s of sources) {
    etag ??= s.etag?.trim() || null;
    lastModified ??= usableLastModified(s);
    if (etag && lastModified) break;
  }
  return { etag, lastModified };
}
