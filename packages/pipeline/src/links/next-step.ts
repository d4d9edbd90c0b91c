import { LINK_STATUSES } from '@crawler/core';
import { REVIVED_ON_REPOST } from './enqueue-links.js';

/** The link fields that say what the fleet does with it next. */
export interface NextStepFacts {
  status: string;
  pausedUntil: Date | null;
  lastErrorType: string | null;
  /** When a revisit schedule fetches it again (null: no schedule). */
  nextFetchAt?: Date | null;
}

/**
 * What happens to a link next, for an operator reading `GET /links/:id`: `waiting` (a worker has it or will take it),
 * `retry_at` (paused: routed again at `at`), `revisit_at` (done, fetched again at `at` by its schedule), `finished`
 * (done, fetched again only on a refresh), `retried_on_repost` (failed by an outage, not the page: posting it again
 * queues it) or `final` (failed for good: only a refresh or a crawl seeded with it fetches it again).
 */
export interface NextStep {
  action: 'waiting' | 'retry_at' | 'revisit_at' | 'finished' | 'retried_on_repost' | 'final';
  at: Date | null;
  message: string;
}

/** What the fleet does with a link next, from its row alone (pure: `now` is the caller's clock). */
export function nextStepOf(link: NextStepFacts, now: Date): NextStep {
  const why = link.lastErrorType ? ` after ${link.lastErrorType}` : '';
  switch (link.status) {
    case LINK_STATUSES.queued:
      return { action: 'waiting', at: null, message: 'queued: waits for a router (route queue) or, once routed, for a worker of its fetcher; Bull Board shows its job' };
    case LINK_STATUSES.routing:
      return { action: 'waiting', at: null, message: 'a router is choosing its fetcher now' };
    case LINK_STATUSES.fetching:
      return { action: 'waiting', at: null, message: 'a fetch worker is fetching it now (or waits for its domain\'s politeness turn)' };
    case LINK_STATUSES.paused: {
      const at = link.pausedUntil;
      if (!at) return { action: 'retry_at', at: null, message: `paused${why}: routed again when its delayed job comes due` };
      const due = at.getTime() <= now.getTime();
      return { action: 'retry_at', at, message: due ? `paused${why}: due since ${at.toISOString()}, routed again as soon as a router takes its job` : `paused${why}: routed again at ${at.toISOString()}` };
    }
    case LINK_STATUSES.done:
      if (link.nextFetchAt) return { action: 'revisit_at', at: link.nextFetchAt, message: `stored; its revisit schedule fetches it again at ${link.nextFetchAt.toISOString()}` };
      return { action: 'finished', at: null, message: 'stored; fetched again only on a refresh (maxAgeSeconds, crawl enqueue --max-age) or a revisit schedule' };
    case LINK_STATUSES.failed:
      if (REVIVED_ON_REPOST.includes(link.lastErrorType ?? '')) {
        return { action: 'retried_on_repost', at: null, message: `failed${why}, which says nothing about the page: nothing more happens until it is posted again (POST /links, crawl enqueue), which queues it again` };
      }
      return { action: 'final', at: null, message: `failed for good${why}: posting it again does not retry it; a refresh (maxAgeSeconds older than its last attempt) or a crawl seeded with it does` };
    default:
      return { action: 'waiting', at: null, message: `status ${link.status}` };
  }
}
