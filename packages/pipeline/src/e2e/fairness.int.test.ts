/**
 * A big site's backlog beside small sites, end to end on real Redis and Postgres with the politeness of a real fleet
 * (one request at a time per domain, a minimum delay between starts). The fetch jobs a domain's politeness holds back
 * must wait their turn, not come back all together at every free start: each time they did, one went and the rest were
 * parked again, so the fetch slots went to re-parking the big site's jobs while the small sites' jobs queued behind
 * them. Counts and orders only: how often the gate refused the big site's jobs, against the requests it let through.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { AcquireOptions, PolitenessGate } from '@crawler/core';
import { RedisPolitenessGate } from '@crawler/politeness';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { REDIS_URL, startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
const servers: TestServer[] = [];
let gateRedis: Redis | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  for (const s of servers.splice(0)) await s.close();
  gateRedis?.disconnect();
  crawler = undefined;
  gateRedis = undefined;
});

const BIG_LINKS = 40;
const SMALL_LINKS = 3;
const pages = (s: TestServer) => s.requests.filter((r) => r.path.startsWith('/p/'));
const page = (title: string) => (_req: unknown, res: import('node:http').ServerResponse) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title }));

describe('end to end: a big site\'s backlog beside small sites', () => {
  it('parks each of the big site\'s jobs until its turn, and the small site is fetched while the big one waits', async () => {
    const big = await startTestServer({ '/p/*': page('big') }, { host: '127.0.0.31' });
    const small = await startTestServer({ '/p/*': page('small') }, { host: '127.0.0.32' });
    servers.push(big, small);
    // The runtime's gate, counted: every refusal of a job of the big site is one job run that fetched nothing.
    let inner: RedisPolitenessGate | undefined;
    const refused = new Map<string, number>();
    const gate: PolitenessGate = {
      async acquire(domain: string, options?: AcquireOptions) {
        const d = await inner!.acquire(domain, options);
        // The fetch jobs' asks only (the router's probes decide again on their own and are not parked by turn).
        if (!d.granted && options?.queued) refused.set(domain, (refused.get(domain) ?? 0) + 1);
        return d;
      },
      pauseDomainFor: (domain, durationMs, reason) => inner!.pauseDomainFor(domain, durationMs, reason),
      domainPausedUntil: (domain) => inner!.domainPausedUntil(domain),
      domainPause: (domain) => inner!.domainPause(domain),
    };
    crawler = await startE2e('fairness', { FETCHERS: 'simple_http:2', DOMAIN_MAX_CONCURRENCY: '1', DOMAIN_MIN_DELAY_MS: '400' }, { gate });
    gateRedis = new Redis(REDIS_URL);
    inner = new RedisPolitenessGate({ redis: gateRedis, prefix: `${crawler.prefix}:polite:`, defaults: { maxConcurrency: 1, minDelayMs: 400 } });

    await crawler.runtime.enqueue(Array.from({ length: BIG_LINKS }, (_, i) => big.url(`/p/${i}`)));
    crawler.runtime.startWorkers();
    await waitFor(async () => pages(big).length >= 3, 'the big site under way', 60_000);
    const { accepted } = await crawler.runtime.enqueue(Array.from({ length: SMALL_LINKS }, (_, i) => small.url(`/p/${i}`)));
    const smallIds = accepted.map((a) => a.linkId);
    await waitFor(async () => (await crawler!.db.prisma.link.count({ where: { id: { in: smallIds }, status: 'done' } })) === SMALL_LINKS, 'the small site done', 60_000);
    await waitFor(async () => pages(big).length >= 20, 'the big site\'s 20th request', 60_000);

    // Each waiting job of the big site was refused about once (when it was first parked, and now and then when a
    // neighbour took its turn), not once per free start: before, every waiting job came back at each of them (93
    // refusals by the 12th request on a loaded 2-core machine, more on a faster one).
    const bigRefusals = refused.get('127.0.0.31') ?? 0;
    expect(bigRefusals).toBeGreaterThan(0);
    expect(bigRefusals).toBeLessThan(BIG_LINKS * 1.5);
    // The small site went while the big one still had most of its backlog.
    expect(pages(small)[0]!.at).toBeLessThan(pages(big)[BIG_LINKS / 2]?.at ?? Infinity);
  }, 120_000);
});
