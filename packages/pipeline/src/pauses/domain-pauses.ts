import type { Redis } from 'ioredis';
import { pausedLinksByDomain, resumePausedLinks, type PrismaClient } from '@crawler/db';
import { RedisPolitenessGate, normalizeDomain } from '@crawler/politeness';
import { shardOfDomain, shardPrefix, type JobQueues } from '@crawler/queue';
import { domainOf, systemClock, type Clock } from '@crawler/core';
import type { CrawlerConfig } from '../config/crawler-config.js';

/** The Redis key prefix of the fleet's politeness gate for a queue prefix (every process of a fleet derives the same). */
export function politenessPrefix(queuePrefix: string): string {
  return `${queuePrefix}:polite:`;
}

/** One paused domain as an operator sees it: the fleet's pause (Redis) and its paused links (Postgres). */
export interface DomainPauseView {
  domain: string;
  /** Why: the error code that paused the domain (`rate_limited`, `blocked_403`, `site_unreachable`, …), else the links' most common. */
  reason: string | null;
  /** When the pause ends: the later of the domain's pause and its links' (ISO time). */
  until: string;
  /** The fleet-wide domain pause in Redis, when one is running. */
  domainPausedUntil: string | null;
  /** Links of the domain waiting on a pause. */
  pausedLinks: number;
}

export interface DomainPausesDeps {
  redis: Redis;
  prisma: PrismaClient;
  /** Where the fleet keeps its pauses: one politeness prefix per shard of QUEUE_PREFIX (QUEUE_SHARDS). */
  config: Pick<CrawlerConfig, 'queuePrefix' | 'queueShards'>;
  /** Needed to lift: the resumed links' route jobs go here. */
  queues?: Pick<JobQueues, 'enqueueRoutes'>;
  clock?: Clock;
}

/**
 * A domain as links (and so their pauses) are keyed: core's domainOf, which drops `www.` and a trailing dot and
 * punycodes an IDN, so `www.shop.example` lifts the pause of `shop.example`; input it cannot read is only trimmed.
 */
function linkDomain(input: string): string {
  try {
    return domainOf(input);
  } catch {
    return normalizeDomain(input);
  }
}

/** What lifting a domain's pause did. */
export interface LiftResult {
  domain: string;
  /** A fleet-wide pause was running and is gone. */
  domainPauseLifted: boolean;
  /** Links resumed: routed again now, in a new generation. */
  linksResumed: number;
}

/**
 * Paused sites, visible and controllable: `crawl pauses` and `GET /pauses` list them, `crawl pauses lift` and
 * `DELETE /pauses/:domain` end a pause. The list joins the fleet's pauses (Redis, authoritative for "may we ask the
 * site") with the paused links in Postgres (what is waiting, and why).
 */
export class DomainPauses {
  /** One gate per shard, by shard number, under the prefixes the workers use (create-runtime.ts). */
  readonly #gates: RedisPolitenessGate[];
  readonly #deps: DomainPausesDeps;
  readonly #clock: Clock;

  constructor(deps: DomainPausesDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    const { queuePrefix, queueShards } = deps.config;
    this.#gates = Array.from({ length: queueShards }, (_, shard) =>
      new RedisPolitenessGate({ redis: deps.redis, prefix: politenessPrefix(shardPrefix(queuePrefix, shard, queueShards)) }),
    );
  }

  /** The gate of the shard that keeps `domain`'s pause. */
  #gateOf(domain: string): RedisPolitenessGate {
    return this.#gates[shardOfDomain(domain, this.#gates.length)]!;
  }

  /** Every paused domain, the longest pause first. */
  async list(): Promise<DomainPauseView[]> {
    const now = this.#clock.now();
    const [perShard, links] = await Promise.all([Promise.all(this.#gates.map((g) => g.listPauses())), pausedLinksByDomain(this.#deps.prisma, now)]);
    const fleet = perShard.flat();
    const byDomain = new Map<string, DomainPauseView>();
    for (const p of fleet) {
      const until = new Date(p.untilMs).toISOString();
      byDomain.set(p.domain, { domain: p.domain, reason: p.reason, until, domainPausedUntil: until, pausedLinks: 0 });
    }
    for (const l of links) {
      const domain = normalizeDomain(l.domain);
      const seen = byDomain.get(domain);
      const until = new Date(l.until).toISOString();
      if (seen) {
        seen.pausedLinks = l.links;
        if (until > seen.until) seen.until = until;
      } else {
        byDomain.set(domain, { domain, reason: l.reason, until, domainPausedUntil: null, pausedLinks: l.links });
      }
    }
    return [...byDomain.values()].sort((a, b) => b.until.localeCompare(a.until) || a.domain.localeCompare(b.domain));
  }

  /** The fleet-wide pause of one domain (what `crawl explain` shows), or null; `www.` is the domain's, as for lift. */
  async pauseOf(domain: string): Promise<{ reason: string; until: string } | null> {
    const d = linkDomain(domain);
    const p = await this.#gateOf(d).domainPause(d);
    return p ? { reason: p.reason, until: new Date(p.untilMs).toISOString() } : null;
  }

  /** End `domain`'s pause: the fleet may ask the site again at once, and its paused links are routed again now. */
  async lift(domainInput: string): Promise<LiftResult> {
    const domain = linkDomain(domainInput);
    if (!this.#deps.queues) throw new Error('DomainPauses.lift needs the job queues');
    const domainPauseLifted = await this.#gateOf(domain).liftPause(domain);
    const resumed = await resumePausedLinks(this.#deps.prisma, domain, this.#clock.now());
    for (let i = 0; i < resumed.length; i += 1_000) {
      await this.#deps.queues.enqueueRoutes(resumed.slice(i, i + 1_000).map((r) => ({ linkId: r.id, url: r.url, generation: r.generation })));
    }
    return { domain, domainPauseLifted, linksResumed: resumed.length };
  }
}
