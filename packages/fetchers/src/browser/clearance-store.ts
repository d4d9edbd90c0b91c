import { randomBytes } from 'node:crypto';
import type { Cookie } from 'playwright-core';
import { registrableDomainOf, type Logger } from '@crawler/core';

/**
 * Where the browser fetchers keep a site's earned clearance — the cookies a bot wall's challenge set once a browser
 * passed it — so every browser of the fleet, and the next Chromium of this process, starts with it instead of meeting
 * the wall again. Values are secrets: implementations never log them.
 */
export interface ClearanceStore {
  /**
   * The clearance cookies kept for `flavour` (a fetcher's name) that a context for `site` (a host without `www.`) can
   * use — its own, and a parent domain's `Domain` cookies —, unexpired; [] when none.
   */
  load(site: string, flavour: string): Promise<Cookie[]>;
  /** Keep those of `cookies` that belong to `site` as clearance for `flavour`, each for its own domain, until it expires. */
  save(site: string, flavour: string, cookies: Cookie[]): Promise<void>;
  /**
   * Claim solving `site`'s wall for `flavour` across the fleet for at most `ttlMs`: the release when this caller is
   * the one solver, null while another holds the claim. Absent: every process solves its walls on its own.
   */
  claimSolve?(site: string, flavour: string, ttlMs: number): Promise<(() => Promise<void>) | null>;
  /** Whether a claim on solving `site`'s wall for `flavour` is held now. */
  solving?(site: string, flavour: string): Promise<boolean>;
}

/** The part of an ioredis client the store uses (so this package needs no Redis client of its own). */
export interface ClearanceRedis {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, px: 'PX', ttlMs: number): Promise<unknown>;
  set(key: string, value: string, px: 'PX', ttlMs: number, nx: 'NX'): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
}

// A claim is released only by its holder: one that outlived its TTL and was taken over is not the old holder's to drop.
const RELEASE_CLAIM = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

export interface RedisClearanceStoreOptions {
  redis: ClearanceRedis;
  /** The crawler's key prefix (`QUEUE_PREFIX`); keys are `<prefix>:clearance:{<scope>}:<flavour>`, scope a cookie's domain (or host). */
  prefix: string;
  /** Lifetime given to a clearance made only of session cookies (they carry no expiry). @defaultValue 1800000 (30 min) */
  sessionTtlMs?: number;
  /** Longest a clearance is kept, whatever its cookies say: walls tie clearance to an IP and a fingerprint. @defaultValue 86400000 (24 h) */
  maxTtlMs?: number;
  logger?: Logger;
  /** Epoch milliseconds now (tests set it). @defaultValue Date.now */
  now?: () => number;
}

// A scope's jar is kept only up to this much cookie text (Chromium allows ~180 cookies of 4 KiB a domain).
const MAX_JAR_BYTES = 64 * 1024;

/** Whether `cookie` belongs to `site` (its domain is the site or under it): other sites' cookies are not its clearance. */
function belongsTo(cookie: Cookie, site: string): boolean {
  const d = scopeOf(cookie);
  return d === site || d.endsWith(`.${site}`) || site.endsWith(`.${d}`);
}

/** The host a cookie is scoped to: its `Domain` without the leading dot, or its host when host-only. */
function scopeOf(cookie: Cookie): string {
  return cookie.domain.replace(/^\./, '').toLowerCase();
}

/**
 * Whether a browser sends `cookie` to `host` (RFC 6265 §5.1.3 domain-match): a host-only cookie (Playwright gives its
 * `domain` without a leading dot) goes to its own host only; a `Domain` cookie (leading dot) to that domain and every
 * host under it.
 */
export function cookieMatchesHost(cookie: Cookie, host: string): boolean {
  const h = host.toLowerCase();
  const d = scopeOf(cookie);
  if (!cookie.domain.startsWith('.')) return h === d;
  return h === d || h.endsWith(`.${d}`);
}

/**
 * The hosts whose cookies a context for `site` can be sent: the site, `www.<site>`, and every parent of the site down
 * to its registrable domain (a parent's `Domain` cookies reach the site).
 */
function scopesFor(site: string): string[] {
  const scopes = [site, `www.${site}`];
  const registrable = registrableDomainOf(site);
  if (registrable && site.endsWith(`.${registrable}`)) {
    for (let d = site.slice(site.indexOf('.') + 1); ; d = d.slice(d.indexOf('.') + 1)) {
      scopes.push(d);
      if (d === registrable) break;
    }
  }
  return scopes;
}

/** Whether a cookie may be kept at all: a `Domain` cookie set on a public suffix (`.co.uk`) is no site's clearance. */
function scopeAllowed(cookie: Cookie): boolean {
  return !cookie.domain.startsWith('.') || registrableDomainOf(scopeOf(cookie)) !== null;
}

const sameCookie = (a: Cookie, b: Cookie): boolean => a.name === b.name && a.domain === b.domain && a.path === b.path;

/** Clearance kept in Redis, shared by every browser fetcher using the same prefix. */
export class RedisClearanceStore implements ClearanceStore {
  readonly #redis: ClearanceRedis;
  readonly #prefix: string;
  readonly #sessionTtlMs: number;
  readonly #maxTtlMs: number;
  readonly #log: Logger | undefined;
  readonly #now: () => number;

  constructor(opts: RedisClearanceStoreOptions) {
    this.#redis = opts.redis;
    this.#prefix = opts.prefix;
    this.#sessionTtlMs = opts.sessionTtlMs ?? 30 * 60_000;
    this.#maxTtlMs = opts.maxTtlMs ?? 24 * 3_600_000;
    this.#log = opts.logger;
    this.#now = opts.now ?? Date.now;
  }

  /** The Redis key of the clearance scoped to `scope` (a cookie's domain, or its host when host-only); the scope is the hash tag. */
  keyOf(scope: string, flavour: string): string {
    return `${this.#prefix}:clearance:{${scope}}:${flavour}`;
  }

  /** The Redis key of the claim on solving a site's wall, in the site's slot. */
  solveKeyOf(site: string, flavour: string): string {
    return `${this.#prefix}:clearance-solving:{${site}}:${flavour}`;
  }

  async claimSolve(site: string, flavour: string, ttlMs: number): Promise<(() => Promise<void>) | null> {
    const key = this.solveKeyOf(site, flavour);
    const token = randomBytes(9).toString('hex');
    if ((await this.#redis.set(key, token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) !== 'OK') return null;
    return async () => {
      await this.#redis.eval(RELEASE_CLAIM, 1, key, token);
    };
  }

  async solving(site: string, flavour: string): Promise<boolean> {
    return (await this.#redis.get(this.solveKeyOf(site, flavour))) !== null;
  }

  /**
   * The clearance a context for `site` can use: the cookies kept under the site, `www.<site>` and its parent domains
   * (a `Domain=.example.com` clearance earned on www.example.com serves shop.example.com), those the site's hosts
   * would be sent.
   */
  async load(site: string, flavour: string): Promise<Cookie[]> {
    const host = site.toLowerCase();
    const hosts = [host, `www.${host}`];
    const nowS = this.#now() / 1000;
    const seen = new Set<string>();
    const out: Cookie[] = [];
    for (const cookies of await Promise.all(scopesFor(host).map((scope) => this.#read(scope, flavour)))) {
      for (const c of cookies) {
        if (!(c.expires === -1 || c.expires > nowS) || !hosts.some((h) => cookieMatchesHost(c, h))) continue;
        const id = `${c.name}\0${c.domain}\0${c.path}`;
        if (seen.has(id)) continue;
        seen.add(id);
        out.push(c);
      }
    }
    return out;
  }

  /** The cookies kept under `scope`'s key; [] for none, or for a value this code did not write. */
  async #read(scope: string, flavour: string): Promise<Cookie[]> {
    const raw = await this.#redis.get(this.keyOf(scope, flavour));
    if (!raw) return [];
    try {
      const cookies = JSON.parse(raw) as Cookie[];
      return Array.isArray(cookies) ? cookies.filter((c) => typeof c?.name === 'string' && typeof c.domain === 'string') : [];
    } catch {
      // A value this code did not write (or a truncated one): no clearance, the wall will hand out a new one.
      return [];
    }
  }

  /**
   * Keep each of `cookies` that belongs to `site` under its own scope (its `Domain`, or its host when host-only), so
   * a `Domain` clearance serves the domain's other hosts and a host-only one only its host. Cookies kept earlier
   * under a scope stay unless replaced (same name, domain and path).
   */
  async save(site: string, flavour: string, cookies: Cookie[]): Promise<void> {
    const nowMs = this.#now();
    const live = (c: Cookie): boolean => c.expires === -1 || c.expires * 1000 > nowMs;
    const mine = cookies.filter((c) => belongsTo(c, site) && scopeAllowed(c) && live(c));
    const byScope = new Map<string, Cookie[]>();
    for (const c of mine) byScope.set(scopeOf(c), [...(byScope.get(scopeOf(c)) ?? []), c]);
    for (const [scope, fresh] of byScope) {
      const kept = (await this.#read(scope, flavour)).filter((c) => live(c) && scopeOf(c) === scope && !fresh.some((f) => sameCookie(f, c)));
      const jar = [...kept, ...fresh];
      const value = JSON.stringify(jar);
      if (value.length > MAX_JAR_BYTES) continue;
      const lastExpiryMs = Math.max(...jar.map((c) => (c.expires === -1 ? nowMs + this.#sessionTtlMs : c.expires * 1000)));
      const ttlMs = Math.min(this.#maxTtlMs, Math.max(1_000, Math.ceil(lastExpiryMs - nowMs)));
      await this.#redis.set(this.keyOf(scope, flavour), value, 'PX', ttlMs);
      // Names and counts only: cookie values are credentials.
      this.#log?.debug({ site, scope, flavour, cookies: jar.length, ttlMs }, 'clearance shared with the fleet');
    }
  }
}
