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
   * Claim solving `site`'s wall for `flavour` across the fleet for at most `ttlMs`, for every host of its registrable
   * domain (a sibling's solve may earn a `Domain` clearance that serves it): the release when this caller is the one
   * solver, null while another holds the claim. Absent: every process solves its walls on its own.
   */
  claimSolve?(site: string, flavour: string, ttlMs: number): Promise<(() => Promise<void>) | null>;
  /** Whether a claim on solving the wall of `site` (or of a host of its registrable domain) for `flavour` is held now. */
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

// Merge cookies into a scope's jar in one step: two workers saving at once would each write back the jar they read
// and drop the other's cookies. Kept: the jar's live cookies of this scope that no fresh one replaces (same name,
// domain and path); a value this code did not write counts as no jar. The key lives until the jar's last cookie
// expires (a session cookie: the session TTL), capped; a jar past the size bound is not written. Returns the TTL, or 0.
// KEYS[1] the jar; ARGV: fresh cookies (JSON array), scope, now (ms), session TTL (ms), max TTL (ms), max jar bytes.
const MERGE_JAR = `
local fresh = cjson.decode(ARGV[1])
local scope, now = ARGV[2], tonumber(ARGV[3])
local sessionTtl, maxTtl, maxBytes = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local function live(c) return c.expires == -1 or (type(c.expires) == 'number' and c.expires * 1000 > now) end
local function replaced(c)
  for _, f in ipairs(fresh) do
    if f.name == c.name and f.domain == c.domain and f.path == c.path then return true end
  end
  return false
end
local jar = {}
local raw = redis.call('GET', KEYS[1])
if raw then
  local ok, old = pcall(cjson.decode, raw)
  if ok and type(old) == 'table' then
    for _, c in ipairs(old) do
      if type(c) == 'table' and type(c.name) == 'string' and type(c.domain) == 'string'
        and string.lower((string.gsub(c.domain, '^%.', ''))) == scope and live(c) and not replaced(c) then
        jar[#jar + 1] = c
      end
    end
  end
end
for _, f in ipairs(fresh) do jar[#jar + 1] = f end
local value = cjson.encode(jar)
if #value > maxBytes then return 0 end
local last = 0
for _, c in ipairs(jar) do
  local e = now + sessionTtl
  if c.expires ~= -1 then e = c.expires * 1000 end
  if e > last then last = e end
end
local ttl = math.min(maxTtl, math.max(1000, math.ceil(last - now)))
redis.call('SET', KEYS[1], value, 'PX', ttl)
return ttl
`;

export interface RedisClearanceStoreOptions {
  redis: ClearanceRedis;
  /**
   * The crawler's key prefix (`QUEUE_PREFIX`); keys are `<prefix>:clearance:{<scope>}:<flavour>`, scope a cookie's
   * domain (or host), and claims `<prefix>:clearance-solving:{<registrable domain>}:<flavour>`.
   */
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

/** Whether `cookie` is scoped to `domain` or to a host under it. */
export function cookieWithin(cookie: Cookie, domain: string): boolean {
  const d = scopeOf(cookie);
  return d === domain || d.endsWith(`.${domain}`);
}

/** Whether `cookie` belongs to `site` (its domain is the site, under it or above it): other sites' cookies are not its clearance. */
function belongsTo(cookie: Cookie, site: string): boolean {
  return cookieWithin(cookie, site) || site.endsWith(`.${scopeOf(cookie)}`);
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

  /** The Redis key of the claim on solving the walls of `scope` (a registrable domain, or a site), in its slot. */
  solveKeyOf(scope: string, flavour: string): string {
    return `${this.#prefix}:clearance-solving:{${scope}}:${flavour}`;
  }

  /**
   * The keys a claim on solving `site`'s wall holds: its registrable domain's, which the domain's other hosts claim
   * too, and the site's own, which workers of the earlier code (one claim per site) claim: holding it as well keeps a
   * fleet in the middle of an upgrade at one solve per wall, the earlier workers waiting for the later ones and back.
   */
  #solveKeysOf(site: string, flavour: string): string[] {
    const host = site.toLowerCase();
    const domain = registrableDomainOf(host) ?? host;
    return domain === host ? [this.solveKeyOf(host, flavour)] : [this.solveKeyOf(domain, flavour), this.solveKeyOf(host, flavour)];
  }

  async claimSolve(site: string, flavour: string, ttlMs: number): Promise<(() => Promise<void>) | null> {
    const token = randomBytes(9).toString('hex');
    const held: string[] = [];
    const release = async (): Promise<void> => {
      for (const key of held) await this.#redis.eval(RELEASE_CLAIM, 1, key, token);
    };
    // The domain's key first, everywhere: of the siblings only one gets past it. One that then finds the site's key
    // held (an earlier worker solving) lets go of what it took, so nobody holds one key while waiting for another.
    for (const key of this.#solveKeysOf(site, flavour)) {
      if ((await this.#redis.set(key, token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) !== 'OK') {
        await release();
        return null;
      }
      held.push(key);
    }
    return release;
  }

  async solving(site: string, flavour: string): Promise<boolean> {
    const held = await Promise.all(this.#solveKeysOf(site, flavour).map((key) => this.#redis.get(key)));
    return held.some((token) => token !== null);
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
      const args = [JSON.stringify(fresh), scope, String(nowMs), String(this.#sessionTtlMs), String(this.#maxTtlMs), String(MAX_JAR_BYTES)];
      const ttlMs = Number(await this.#redis.eval(MERGE_JAR, 1, this.keyOf(scope, flavour), ...args));
      // Names and counts only: cookie values are credentials.
      if (ttlMs > 0) this.#log?.debug({ site, scope, flavour, cookies: fresh.length, ttlMs }, 'clearance shared with the fleet');
    }
  }
}
