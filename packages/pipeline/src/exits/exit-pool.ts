import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { BoundedMap, CrawlerError, DIRECT_TIER, isExitError, maskProxyUrl, redactCredentials, type Clock, type ExitTier, type Logger } from '@crawler/core';
import { exitFailureScope, type FetchExit } from '@crawler/fetchers';

/** Where the fleet shares which proxies are down: a key per proxy under the queue prefix, expiring with the verdict. */
export interface ExitPoolShared {
  redis: Pick<Redis, 'set' | 'mget' | 'get' | 'del' | 'eval'>;
  prefix: string;
}

/** The placeholder a sticky-session proxy URL carries (`http://user-session-{session}:pass@gw.example:8000`). */
export const SESSION_PLACEHOLDER = '{session}';

/** Per-site entries this worker keeps in memory; past it, the least recently set site is forgotten (a new session id). */
export const SITES_REMEMBERED = 10_000;

/**
 * How many exits of one tier a site may refuse (within the session retirement time) while the link stays on the tier,
 * each refusal retiring that exit for the site: a site that bans one address of a pool serves the pool's others; one
 * that refuses a second exit of the tier refuses its address range, and the link climbs to a dearer tier.
 */
export const EXIT_ROTATIONS_PER_TIER = 1;

/**
 * The exits of the configured tiers and their health. A proxy URL that refused a connection, answered 407 or timed
 * out is left out for `unhealthyMs`, by every worker of the fleet when `shared` (a Redis key per proxy, named by a
 * hash of its URL so no credential reaches Redis); the tier's other URLs take its requests meanwhile, in turn. A Redis
 * error only costs the fleet-wide view: this process's own verdicts still hold.
 */
export class ExitPool {
  readonly #tiers: Map<string, ExitTier>;
  /** This process's verdicts: proxy URL → clock time until which it is left out. */
  readonly #down = new Map<string, number>();
  readonly #turn = new Map<string, number>();
  /**
   * Sessions (site + proxy URL as configured) retired after a block: clock time until which they are not reused. Per
   * site, so bounded to the most recent: a fleet meets sites without end (the shared Redis keys expire on their own).
   */
  readonly #retired = new BoundedMap<string, number>(SITES_REMEMBERED);
  /** The current sticky-session id per site and configured URL, for the sites used most recently. */
  readonly #sessions = new BoundedMap<string, string>(SITES_REMEMBERED);
  /** Exits of a tier each site refused lately (noteBlock), per site and tier. */
  readonly #tierBlocks = new BoundedMap<string, { count: number; untilMs: number }>(SITES_REMEMBERED);

  constructor(
    tiers: readonly ExitTier[],
    private readonly opts: {
      unhealthyMs: number;
      clock: Clock;
      shared?: ExitPoolShared;
      logger?: Logger;
      /** How long a session a site blocked is not reused for that site. @defaultValue 1800000 (30 min) */
      sessionRetireMs?: number;
      /** Session ids for sticky-session URLs. @defaultValue random hex */
      newSessionId?: () => string;
    },
  ) {
    this.#tiers = new Map(tiers.map((t) => [t.name, t]));
  }

  /** The configured tiers, cheapest first. */
  get tiers(): ExitTier[] {
    return [...this.#tiers.values()].sort((a, b) => a.cost - b.cost);
  }

  /** Whether `tier` is configured. */
  has(tier: string): boolean {
    return this.#tiers.has(tier);
  }

  /**
   * An exit of `tier` for one request: `direct` is the worker itself; a proxied tier gives its next healthy URL not in
   * `exclude` (URLs as picked before: a sticky session's excludes its configured URL), or null when every URL is down
   * (or the tier is not configured).
   */
  async pick(tier: string, exclude: ReadonlySet<string> = new Set(), site?: string): Promise<FetchExit | null> {
    if (tier === DIRECT_TIER) return this.#tiers.has(DIRECT_TIER) ? { tier, proxyUrl: null } : null;
    const t = this.#tiers.get(tier);
    if (!t) return null;
    const now = this.opts.clock.now().getTime();
    // `exclude` holds URLs as picked: a sticky session's stands for its configured URL. Matching only the session's
    // URL let a job go round its tier's gateways for ever once a proxy took longer to fail than its verdict lasts.
    const excluded = new Set([...exclude].map((u) => this.#configuredUrlOf(u) ?? u));
    const up = t.urls.filter((u) => !excluded.has(u) && !((this.#down.get(u) ?? 0) > now));
    if (up.length === 0) return null;
    const { down, retired } = await this.#fleetVerdicts(up, site);
    const healthy = up.filter((u) => !down.has(u));
    if (healthy.length === 0) return null;
    const fresh = healthy.filter((u) => !(site && !isSticky(u) && ((this.#retired.get(sessionKey(site, u)) ?? 0) > now || retired.has(u))));
    // Every identity of the tier was refused by this site lately: the least bad choice is one of them again (the
    // tier has no other), not no request at all.
    const usable = fresh.length > 0 ? fresh : healthy;
    const turn = this.#turn.get(tier) ?? 0;
    this.#turn.set(tier, turn + 1);
    const configured = usable[turn % usable.length]!;
    return { tier, proxyUrl: isSticky(configured) ? await this.#stickyUrl(configured, site ?? '') : configured };
  }

  /**
   * Run a request that is no page fetch (robots.txt, the probe, a sitemap) from the worker's own address, or, without
   * `direct`, through the cheapest tier: a proxy that fails is marked down and the tier's next URL tried. With none up
   * it throws `proxy_unavailable`; it never falls back to the worker's own address.
   */
  async housekeeping<T>(run: (exit: FetchExit | undefined) => Promise<T>): Promise<T> {
    if (this.#tiers.has(DIRECT_TIER)) return run(undefined);
    const tier = this.tiers[0]!.name;
    const tried = new Set<string>();
    const failures: string[] = [];
    for (;;) {
      const exit = await this.pick(tier, tried);
      if (!exit?.proxyUrl) throw new CrawlerError('proxy_unavailable', failures.length > 0 ? `every proxy of tier '${tier}' failed (${failures.join('; ')})` : `every proxy of tier '${tier}' is down`);
      try {
        return await run(exit);
      } catch (err) {
        if (!isExitError(err)) throw err;
        tried.add(exit.proxyUrl);
        failures.push(redactCredentials(err instanceof Error ? err.message : String(err)));
        // A proxy that refused only this target stays up for the others.
        if (exitFailureScope(err) === 'proxy') await this.markUnhealthy(exit.proxyUrl, failures.at(-1)!);
      }
    }
  }

  /**
   * A session is an exit identity on one site: a proxy URL, or one sticky session of a URL carrying `{session}`.
   * Blocked there, it is retired for that site (fleet-wide when shared): a plain URL is not picked for the site for
   * `sessionRetireMs`, a sticky URL gets a new session id. Other sites keep using it.
   */
  async retireSession(site: string, proxyUrl: string, why = 'a block'): Promise<void> {
    const configured = this.#configuredUrlOf(proxyUrl);
    if (!configured) return;
    const ttl = this.opts.sessionRetireMs ?? 1_800_000;
    const until = this.opts.clock.now().getTime() + ttl;
    const key = sessionKey(site, configured);
    this.#retired.set(key, until);
    if (isSticky(configured)) this.#sessions.delete(key);
    this.opts.logger?.info({ site, proxy: maskProxyUrl(proxyUrl), retiredForMs: ttl, why }, 'exit session retired for the site');
    const shared = this.opts.shared;
    if (!shared) return;
    try {
      if (isSticky(configured)) await shared.redis.del(this.#sessionKey(site, configured));
      else await shared.redis.set(this.#retiredKey(site, configured), String(until), 'PX', ttl);
    } catch (err) {
      this.opts.logger?.warn({ err, site }, 'could not share a retired session; other workers may reuse it');
    }
  }

  /**
   * A site refused an exit of `tier` (a block): how many exits of the tier it refused lately, this one included
   * (fleet-wide when shared, for `sessionRetireMs`).
   */
  async noteBlock(site: string, tier: string): Promise<number> {
    const ttl = this.opts.sessionRetireMs ?? 1_800_000;
    const now = this.opts.clock.now().getTime();
    const key = `${site} ${tier}`;
    const mine = this.#tierBlocks.get(key);
    let count = (mine && mine.untilMs > now ? mine.count : 0) + 1;
    const shared = this.opts.shared;
    if (shared) {
      try {
        const k = `${shared.prefix}:tier-blocks:${tier}:${site}`;
        // One script: workers recording refusals at the same moment each count one (one key, so Redis Cluster-safe).
        count = Number(await shared.redis.eval(NOTE_BLOCK_SCRIPT, 1, k, count, now, now + ttl, ttl));
      } catch (err) {
        this.opts.logger?.warn({ err, site, tier }, "could not share a site's refusals of a tier; counting this worker's own");
      }
    }
    this.#tierBlocks.set(key, { count, untilMs: now + ttl });
    return count;
  }

  /**
   * Whether `tier` has an exit for `site` other than `refused` (as picked): a healthy URL the site has not refused
   * lately, or a sticky-session URL (a new session is a new identity).
   */
  async hasOtherExit(tier: string, site: string, refused: string): Promise<boolean> {
    const t = this.#tiers.get(tier);
    if (!t || tier === DIRECT_TIER) return false;
    const configured = this.#configuredUrlOf(refused) ?? refused;
    const now = this.opts.clock.now().getTime();
    const up = t.urls.filter((u) => !((this.#down.get(u) ?? 0) > now));
    if (up.length === 0) return false;
    const { down, retired } = await this.#fleetVerdicts(up, site);
    return up.some((u) => !down.has(u) && (isSticky(u) || (u !== configured && !((this.#retired.get(sessionKey(site, u)) ?? 0) > now) && !retired.has(u))));
  }

  /** A picked URL's id, that of the configured URL it came from: it names the proxy in Redis without its credentials. */
  idOf(proxyUrl: string): string {
    return proxyId(this.#configuredUrlOf(proxyUrl) ?? proxyUrl);
  }

  /** The exit of `tier` whose configured URL has id `id` (see idOf), or null when this worker has no such proxy. */
  byId(tier: string, id: string): FetchExit | null {
    const url = this.#tiers.get(tier)?.urls.find((u) => proxyId(u) === id);
    return url ? { tier, proxyUrl: url } : null;
  }

  /** The configured URL a picked URL came from (a sticky URL's session id put back to the placeholder). */
  #configuredUrlOf(proxyUrl: string): string | null {
    for (const t of this.#tiers.values()) {
      for (const u of t.urls) {
        if (u === proxyUrl) return u;
        if (isSticky(u)) {
          const [head, tail] = u.split(SESSION_PLACEHOLDER) as [string, string];
          if (proxyUrl.startsWith(head) && proxyUrl.endsWith(tail)) return u;
        }
      }
    }
    return null;
  }

  /** The site's current session of a sticky URL, shared by the fleet (the first worker to ask names it). */
  async #stickyUrl(configured: string, site: string): Promise<string> {
    const key = sessionKey(site, configured);
    let id = this.#sessions.get(key);
    const shared = this.opts.shared;
    if (shared) {
      try {
        const fresh = this.opts.newSessionId?.() ?? randomBytes(6).toString('hex');
        const k = this.#sessionKey(site, configured);
        await shared.redis.set(k, fresh, 'PX', this.opts.sessionRetireMs ?? 1_800_000, 'NX');
        id = (await shared.redis.get(k)) ?? fresh;
      } catch (err) {
        this.opts.logger?.warn({ err, site }, "could not read the fleet's sticky session; using this worker's own");
      }
    }
    id ??= this.opts.newSessionId?.() ?? randomBytes(6).toString('hex');
    this.#sessions.set(key, id);
    return configured.replace(SESSION_PLACEHOLDER, encodeURIComponent(id));
  }

  /** Leave `proxyUrl` out for `unhealthyMs`, here and (shared) fleet-wide; `reason` (what it said, no credential) is logged. */
  async markUnhealthy(picked: string, reason: string): Promise<void> {
    // A sticky session's URL is its configured URL's: the proxy behind it is what is down.
    const proxyUrl = this.#configuredUrlOf(picked) ?? picked;
    const until = this.opts.clock.now().getTime() + this.opts.unhealthyMs;
    this.#down.set(proxyUrl, until);
    this.opts.logger?.warn({ proxy: maskProxyUrl(proxyUrl), reason, unhealthyMs: this.opts.unhealthyMs }, 'proxy unhealthy: failing over to another URL of its tier');
    const shared = this.opts.shared;
    if (!shared) return;
    try {
      await shared.redis.set(this.#key(proxyUrl), String(until), 'PX', this.opts.unhealthyMs);
    } catch (err) {
      this.opts.logger?.warn({ err, proxy: maskProxyUrl(proxyUrl) }, 'could not share a proxy verdict; other workers may still try it');
    }
  }

  /** The fleet's verdicts on `urls`: proxies down, and (for `site`) sessions retired. */
  async #fleetVerdicts(urls: readonly string[], site?: string): Promise<{ down: Set<string>; retired: Set<string> }> {
    const down = new Set<string>();
    const retired = new Set<string>();
    const shared = this.opts.shared;
    if (!shared) return { down, retired };
    try {
      const retirable = site ? urls.filter((u) => !isSticky(u)) : [];
      const got = await shared.redis.mget(...urls.map((u) => this.#key(u)), ...retirable.map((u) => this.#retiredKey(site!, u)));
      const now = this.opts.clock.now().getTime();
      // Redis expires keys in real time; the injected clock is checked too (simulations jump days).
      urls.forEach((u, i) => got[i] != null && Number(got[i]) > now && down.add(u));
      retirable.forEach((u, i) => {
        const v = got[urls.length + i];
        if (v != null && Number(v) > now) retired.add(u);
      });
    } catch (err) {
      this.opts.logger?.warn({ err }, "could not read the fleet's proxy verdicts; using this worker's own");
    }
    return { down, retired };
  }

  #key(proxyUrl: string): string {
    return `${this.opts.shared!.prefix}:proxy-down:${proxyId(proxyUrl)}`;
  }

  #retiredKey(site: string, configured: string): string {
    return `${this.opts.shared!.prefix}:session-retired:${proxyId(configured)}:${site}`;
  }

  #sessionKey(site: string, configured: string): string {
    return `${this.opts.shared!.prefix}:session:${proxyId(configured)}:${site}`;
  }
}

/**
 * A site's refusals of a tier, fleet-wide: the stored "count untilMs" plus one, or this worker's own count when it is
 * higher (the fleet's key was lost), written back with the window. Redis expires keys in real time; the injected clock
 * (ARGV[2]) is checked too, since simulations jump days.
 */
const NOTE_BLOCK_SCRIPT = `
local count = tonumber(ARGV[1])
local v = redis.call('GET', KEYS[1])
if v then
  local fleet, untilMs = string.match(v, '^(%d+) (%d+)$')
  if fleet and tonumber(untilMs) > tonumber(ARGV[2]) and tonumber(fleet) + 1 > count then count = tonumber(fleet) + 1 end
end
redis.call('SET', KEYS[1], count .. ' ' .. ARGV[3], 'PX', ARGV[4])
return count`;

function isSticky(url: string): boolean {
  return url.includes(SESSION_PLACEHOLDER);
}

function sessionKey(site: string, configured: string): string {
  return `${site} ${configured}`;
}

/** A stable id of a proxy URL that reveals nothing of it (for Redis keys). */
export function proxyId(proxyUrl: string): string {
  return createHash('sha256').update(proxyUrl).digest('hex').slice(0, 16);
}
