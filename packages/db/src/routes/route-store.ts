import { canonicalFetcherName, CrawlerError } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import type { StoreDeps } from '../attempts/types.js';

/** A legacy hard-coded route (fetcher_router): used only when learning mode is off: with learning on,
 * the learned choice and the probe decide and this table is not consulted. */
export interface Route {
  domain: string;
  fetcher: string;
}

function normalizeDomain(domain: string): string {
  const d = domain.trim().toLowerCase().replace(/^www\./, '');
  if (d === '') throw new CrawlerError('invalid_route', 'route domain is empty');
  return d;
}

/** CRUD over the legacy fetcher_router table; fetcher names are stored canonical. */
export class RouteStore {
  readonly #prisma: PrismaClient;

  constructor(deps: StoreDeps) {
    this.#prisma = deps.prisma;
  }

  /** The route for `domain` (leading www. ignored), or null. */
  async get(domain: string): Promise<Route | null> {
    const d = normalizeDomain(domain);
    const row = await withDbErrors('get route', () => this.#prisma.fetcherRoute.findUnique({ where: { domain: d } }));
    return row ? { domain: row.domain, fetcher: canonicalFetcherName(row.fetcher) } : null;
  }

  /** Create or replace the route for `domain`. */
  async set(domain: string, fetcher: string): Promise<Route> {
    const d = normalizeDomain(domain);
    const f = canonicalFetcherName(fetcher);
    if (f === '') throw new CrawlerError('invalid_route', `route for ${d} has an empty fetcher`);
    await withDbErrors('set route', () =>
      this.#prisma.fetcherRoute.upsert({ where: { domain: d }, create: { domain: d, fetcher: f }, update: { fetcher: f } }),
    );
    return { domain: d, fetcher: f };
  }

  /** Remove the route; true when one existed. */
  async delete(domain: string): Promise<boolean> {
    const d = normalizeDomain(domain);
    const { count } = await withDbErrors('delete route', () => this.#prisma.fetcherRoute.deleteMany({ where: { domain: d } }));
    return count > 0;
  }

  /** Every route, by domain. */
  async list(): Promise<Route[]> {
    const rows = await withDbErrors('list routes', () => this.#prisma.fetcherRoute.findMany({ orderBy: { domain: 'asc' } }));
    return rows.map((r) => ({ domain: r.domain, fetcher: canonicalFetcherName(r.fetcher) }));
  }
}
