import type { AcquireOptions, PolitenessGate } from '@crawler/core';
import type { RedisGateDecision, RedisPolitenessGate } from './redis-politeness-gate.js';

/** The politeness gates of a sharded deployment, and where a domain lives among them. */
export interface ShardedPolitenessGateOptions {
  /** One gate per shard, by shard number; each keeps its keys under its shard's hash tag. */
  gates: readonly RedisPolitenessGate[];
  /** The shard of a domain: must be the function the queues use, so a site's jobs and its politeness keys share a slot. */
  shardOf: (domain: string) => number;
}

/**
 * The fleet's politeness gate over sharded queues (QUEUE_SHARDS > 1): each call goes to the gate of the domain's
 * shard, so a domain is only ever counted in one place and its limits stay exact fleet-wide, while different shards'
 * domains live in different Cluster slots (and on different masters).
 */
export class ShardedPolitenessGate implements PolitenessGate {
  readonly #gates: readonly RedisPolitenessGate[];
  readonly #shardOf: (domain: string) => number;

  constructor(o: ShardedPolitenessGateOptions) {
    if (o.gates.length === 0) throw new TypeError('ShardedPolitenessGate needs at least one gate');
    this.#gates = o.gates;
    this.#shardOf = o.shardOf;
  }

  /** The gate that owns `domain`. */
  gateFor(domain: string): RedisPolitenessGate {
    const gate = this.#gates[this.#shardOf(domain)];
    if (!gate) throw new RangeError(`no politeness gate for shard ${this.#shardOf(domain)} of ${this.#gates.length}`);
    return gate;
  }

  acquire(domain: string, options?: AcquireOptions): Promise<RedisGateDecision> {
    return this.gateFor(domain).acquire(domain, options);
  }

  /** See RedisPolitenessGate.pauseDomain: for operator tools and tests on one machine. */
  pauseDomain(domain: string, untilMs: number, reason: string): Promise<void> {
    return this.gateFor(domain).pauseDomain(domain, untilMs, reason);
  }

  pauseDomainFor(domain: string, durationMs: number, reason: string): Promise<number> {
    return this.gateFor(domain).pauseDomainFor(domain, durationMs, reason);
  }

  domainPausedUntil(domain: string): Promise<number | null> {
    return this.gateFor(domain).domainPausedUntil(domain);
  }

  /** See RedisPolitenessGate.raiseMinDelay (a robots.txt Crawl-delay). */
  raiseMinDelay(domain: string, delayMs: number, ttlMs?: number): Promise<void> {
    return this.gateFor(domain).raiseMinDelay(domain, delayMs, ttlMs);
  }

  /** See RedisPolitenessGate.heldSlots. */
  heldSlots(domain: string): Promise<number> {
    return this.gateFor(domain).heldSlots(domain);
  }
}
