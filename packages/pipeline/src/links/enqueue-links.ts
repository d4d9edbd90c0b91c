import { CrawlerError, LINK_STATUSES, domainOf, normalizeUrl } from '@crawler/core';
import type { JobQueues } from '@crawler/queue';
import type { LinkRepo } from './link-repo.js';

/** A URL that went in. */
export interface AcceptedLink {
  /** The URL as given. */
  input: string;
  /** Its normalized form (the link's `url`). */
  url: string;
  linkId: string;
  /** False when the page was already known (same normalized URL enqueued before or earlier in the batch). */
  created: boolean;
  /**
   * Whether a route job was requested for it: true for a new link or one still `queued` (an existing job with the same
   * id makes the request a no-op, so this is still one job); false for duplicates within the batch and links past routing.
   */
  queued: boolean;
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
}

export interface EnqueueLinksOptions {
  links: LinkRepo;
  queues: JobQueues;
  /** Per-link override of the global learning flag for every URL of this batch (undefined: follow the flag). */
  learningModeEnabled?: boolean;
}

/**
 * Put URLs into the crawl: normalize, reject invalid ones with a per-URL message (they are not stored), dedupe,
 * upsert the links (the same page twice is one link) and add one route job per new link in one round trip
 * (job id = link id, so it is also one job).
 */
export async function enqueueLinks(inputs: readonly string[], opts: EnqueueLinksOptions): Promise<EnqueueResult> {
  const rejected: RejectedLink[] = [];
  const valid: Array<{ input: string; url: string; domain: string }> = [];
  for (const input of inputs) {
    try {
      const url = normalizeUrl(input);
      valid.push({ input, url, domain: domainOf(url) });
    } catch (err) {
      rejected.push({
        input,
        code: err instanceof CrawlerError ? err.code : 'invalid_url',
        message: err instanceof Error ? err.message : String(err),
      });
    }
  }

  const unique = new Map<string, { input: string; url: string; domain: string }>();
  for (const v of valid) if (!unique.has(v.url)) unique.set(v.url, v);
  const rows = await opts.links.upsertMany(
    [...unique.values()].map((v) => ({ url: v.url, initialUrl: v.input.trim(), domain: v.domain, learningModeEnabled: opts.learningModeEnabled ?? null })),
  );
  const byUrl = new Map(rows.map((r) => [r.url, r]));

  // A link still `queued` gets its job (again) too: if a previous enqueue stored the row but died before adding the
  // job, this repairs it; when the job does exist the same job id makes the add a no-op.
  const toQueue = rows.filter((r) => r.created || r.status === LINK_STATUSES.queued);
  for (let i = 0; i < toQueue.length; i += 1_000) {
    await opts.queues.enqueueRoutes(toQueue.slice(i, i + 1_000).map((r) => ({ linkId: r.id, url: r.url })));
  }
  const queuedIds = new Set(toQueue.map((r) => r.id));

  const seen = new Set<string>();
  const accepted: AcceptedLink[] = valid.flatMap((v) => {
    const row = byUrl.get(v.url);
    if (!row) return [];
    const first = !seen.has(v.url);
    seen.add(v.url);
    return [{ input: v.input, url: v.url, linkId: row.id, created: first && row.created, queued: first && queuedIds.has(row.id) }];
  });
  return { accepted, rejected };
}
