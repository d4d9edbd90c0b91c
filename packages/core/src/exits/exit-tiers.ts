/**
 * Exit tiers: where a request leaves from. `direct` is the worker's own address (cost 0); every other tier is a set of
 * proxy URLs bought at a price. An arm is a (fetcher, tier) pair: the router learns which arm gets each site and picks
 * the cheapest one that works. Pure data in, data out: no sockets here.
 */
import { z } from 'zod';
import { FETCHERS } from '../contracts/names.js';

/** The implicit tier with no proxy: the worker's own address. */
export const DIRECT_TIER = 'direct';

/** Proxy schemes a tier may use. */
export const PROXY_PROTOCOLS = ['http:', 'https:', 'socks5:'] as const;

const TIER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * A proxy URL as it may appear anywhere people or machines read it (logs, errors, explain, metrics): the user
 * and password are replaced by `***` (a sticky-session username carries the account too). Never throws.
 */
export function maskProxyUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return `${u.protocol}//${u.host}`;
    return `${u.protocol}//***@${u.host}`;
  } catch {
    // Nothing to show safely of a string that is not even a URL.
    return '(unparsable proxy URL)';
  }
}

/**
 * Replace every `//user:pass@` (or `//user@`) in free text by `//***@`: for messages that may quote a proxy URL. The
 * user info runs to the last '@' before the path, as URL parsers read it: a password with an unescaped '@'
 * (`//user:p@ss@host`) is masked whole, not up to its own '@'.
 */
export function redactCredentials(text: string): string {
  return (
    text
      .replace(/\/\/[^/\s"'<>]+@/g, '//***@')
      // A proxy written without its scheme (`alice:s3cret@host:3128`, refused at start-up, but shown in the error):
      // a `user:` at the start of a string or word, up to its last '@'.
      .replace(/(^|["'\s[,])[^\s"'<>/@:]+:[^\s"'<>/]*@(?=[^\s"'<>/@]+)/g, '$1***@')
  );
}

const proxyUrl = z.string().superRefine((v, ctx) => {
  // `host:port` parses as a URL whose scheme is the host (or not at all): say what is missing, not what it parsed as.
  if (!v.includes('://')) {
    ctx.addIssue({ code: 'custom', message: `no scheme: a proxy URL starts with ${PROXY_PROTOCOLS.map((p) => `${p}//`).join(', ').replace(/, (?=[^,]*$)/, ' or ')} (http://host:port, with user:password@ before the host when it asks for them)` });
    return;
  }
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: `not a URL: ${maskProxyUrl(v)}` });
    return;
  }
  if (!(PROXY_PROTOCOLS as readonly string[]).includes(u.protocol)) {
    ctx.addIssue({ code: 'custom', message: `${maskProxyUrl(v)}: expected ${PROXY_PROTOCOLS.map((p) => p.slice(0, -1)).join(', ')}` });
  } else if (u.port === '' && u.protocol === 'socks5:') {
    ctx.addIssue({ code: 'custom', message: `${maskProxyUrl(v)}: a socks5 proxy needs a port` });
  } else if (!decodable(u.username) || !decodable(u.password)) {
    // The proxy clients decode the user info: a stray '%' would fail every request through the proxy, not start-up.
    ctx.addIssue({ code: 'custom', message: `${maskProxyUrl(v)}: its user name or password has a '%' that starts no percent-encoding (write a '%' as %25)` });
  }
});

function decodable(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

const tierSchema = z.object({
  name: z.string().regex(TIER_NAME, 'a tier name is lower-case letters, digits, _ or -'),
  /** Cost units per request (the same unit as fetcher CPU costs, FETCHER_COST_UNITS). */
  cost: z.number().finite().min(0),
  urls: z.array(proxyUrl).min(1, 'a proxied tier needs at least one URL'),
});

/** The tiers' JSON (PROXY_TIERS / PROXY_TIERS_FILE), as zod reads it. */
export const PROXY_TIERS_SCHEMA = z.array(tierSchema);

/** One exit tier: a name, a cost per request, and its proxy URLs (none for `direct`). */
export interface ExitTier {
  name: string;
  /** Cost units per request through this tier. */
  cost: number;
  urls: string[];
}

/**
 * Parse the tiers' JSON. `direct` (cost 0, no URLs) comes first unless `direct` is false; tiers are then ordered by
 * cost. Throws an Error whose message never quotes a credential.
 */
export function parseProxyTiers(json: string, opts: { direct: boolean }): ExitTier[] {
  let raw: unknown = [];
  if (json.trim() !== '') {
    try {
      raw = JSON.parse(json);
    } catch (err) {
      // JSON.parse quotes the text around the error: never echo it.
      throw new Error(`not JSON (${(err as Error).name})`);
    }
  }
  const parsed = PROXY_TIERS_SCHEMA.safeParse(raw);
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `${i.path.join('.') || 'tiers'}: ${redactCredentials(i.message)}`).join('; '));
  }
  const tiers: ExitTier[] = parsed.data.map((t) => ({ name: t.name, cost: t.cost, urls: [...new Set(t.urls)] }));
  const names = new Set<string>();
  for (const t of tiers) {
    if (t.name === DIRECT_TIER) throw new Error(`'${DIRECT_TIER}' is implicit (PROXY_DIRECT): do not list it`);
    if (names.has(t.name)) throw new Error(`tier '${t.name}' is listed twice`);
    names.add(t.name);
  }
  const all = opts.direct ? [{ name: DIRECT_TIER, cost: 0, urls: [] }, ...tiers] : tiers;
  if (all.length === 0) throw new Error('no exit tier: PROXY_DIRECT=false needs PROXY_TIERS');
  return all.sort((a, b) => a.cost - b.cost);
}

/**
 * What a fetcher costs per request, in the tiers' cost units, before any proxy: a browser page burns about a CPU
 * second and a few hundred MB for a while, plain HTTP almost nothing. These make "a browser on the worker's address"
 * and "plain HTTP through a cheap proxy" comparable.
 */
export const FETCHER_COST_UNITS: Readonly<Record<string, number>> = {
  [FETCHERS.simpleHttp]: 0.01,
  [FETCHERS.playwright]: 1,
  [FETCHERS.playwrightStealth]: 1.5,
};

/** Cost units of a fetcher unknown to FETCHER_COST_UNITS: priced as a browser, so it is never the cheap guess. */
export const UNKNOWN_FETCHER_COST_UNITS = 1;

/** One arm of the learned choice: a fetcher and the tier it leaves from. */
export interface Arm {
  fetcher: string;
  tier: string;
}

const ARM_SEP = '@';

/**
 * The arm as one key (stored where a fetcher name was, in the learned rollups): the fetcher alone for `direct`, so
 * every attempt logged before tiers existed is evidence for its direct arm; `fetcher@tier` otherwise.
 */
export function armKey(arm: Arm): string {
  return arm.tier === DIRECT_TIER ? arm.fetcher : `${arm.fetcher}${ARM_SEP}${arm.tier}`;
}

/** Read an arm key back (`simple_http@residential`, or a bare fetcher for `direct`). */
export function parseArmKey(key: string): Arm {
  const at = key.indexOf(ARM_SEP);
  return at < 0 ? { fetcher: key, tier: DIRECT_TIER } : { fetcher: key.slice(0, at), tier: key.slice(at + 1) };
}

/** Cost units of one request by an arm: the fetcher's CPU plus the tier's price. */
export function armCost(arm: Arm, tiers: readonly ExitTier[], fetcherCosts: Readonly<Record<string, number>> = FETCHER_COST_UNITS): number {
  const tier = tiers.find((t) => t.name === arm.tier);
  return (fetcherCosts[arm.fetcher] ?? UNKNOWN_FETCHER_COST_UNITS) + (tier?.cost ?? Number.POSITIVE_INFINITY);
}

/**
 * Expected cost per page actually got: an arm that works half the time pays for two requests per page. Infinity
 * when it never works.
 */
export function expectedCostPerSuccess(cost: number, successRate: number): number {
  return successRate > 0 ? cost / successRate : Number.POSITIVE_INFINITY;
}

/** Which fetchers may leave through a proxied tier. */
export interface ArmOptions {
  /** Browsers use proxied tiers too (a context per exit). `false` holds them to `direct`. @defaultValue true */
  browsersProxied?: boolean;
}

/** Whether `fetcher` may use `tier`. */
export function armAllowed(arm: Arm, opts: ArmOptions = {}): boolean {
  return arm.tier === DIRECT_TIER || arm.fetcher === FETCHERS.simpleHttp || opts.browsersProxied !== false;
}

/** Every arm the fleet can run: each fetcher on each tier it may use, cheapest first. */
export function armsOf(fetchers: readonly string[], tiers: readonly ExitTier[], opts: ArmOptions = {}): Arm[] {
  const arms: Arm[] = [];
  for (const tier of tiers) for (const fetcher of fetchers) if (armAllowed({ fetcher, tier: tier.name }, opts)) arms.push({ fetcher, tier: tier.name });
  return arms.sort((a, b) => armCost(a, tiers) - armCost(b, tiers) || armKey(a).localeCompare(armKey(b)));
}

/**
 * The ladder a blocked link climbs: plain HTTP on each tier, cheapest first (a site that blocks a datacenter range
 * usually serves a residential address the same pages, no browser needed), then the stealth browser on each tier it
 * may use, cheapest first (a wall that refuses every plain client often lets a stealth browser through from the
 * worker's own address). The ordinary browser stands in for stealth when stealth is not run: a block is never an
 * answer to a lighter browser. Only arms of configured fetchers and tiers appear.
 */
export function escalationLadder(fetchers: readonly string[], tiers: readonly ExitTier[], opts: ArmOptions = {}): Arm[] {
  const byCost = [...tiers].sort((a, b) => a.cost - b.cost);
  const ladder: Arm[] = [];
  if (fetchers.includes(FETCHERS.simpleHttp)) for (const t of byCost) ladder.push({ fetcher: FETCHERS.simpleHttp, tier: t.name });
  const browser = fetchers.includes(FETCHERS.playwrightStealth) ? FETCHERS.playwrightStealth : fetchers.includes(FETCHERS.playwright) ? FETCHERS.playwright : null;
  if (browser) for (const t of byCost) if (armAllowed({ fetcher: browser, tier: t.name }, opts)) ladder.push({ fetcher: browser, tier: t.name });
  return ladder;
}

/**
 * The arm after `current` on the ladder when `current` was blocked; null at the top. A browser not on the ladder (the
 * ordinary one) goes to the ladder's browser on the same tier or the next dearer one; any other arm not on it to the
 * first rung that costs more. A block never moves a link down.
 */
export function nextArm(ladder: readonly Arm[], current: Arm, tiers: readonly ExitTier[]): Arm | null {
  const i = ladder.findIndex((a) => a.fetcher === current.fetcher && a.tier === current.tier);
  if (i >= 0) return ladder[i + 1] ?? null;
  const tierCost = (name: string) => tiers.find((t) => t.name === name)?.cost ?? Number.POSITIVE_INFINITY;
  if (current.fetcher !== FETCHERS.simpleHttp) {
    const browserRung = ladder.find((a) => a.fetcher !== FETCHERS.simpleHttp && tierCost(a.tier) >= tierCost(current.tier));
    if (browserRung) return browserRung;
  }
  const cost = armCost(current, tiers);
  return ladder.find((a) => armCost(a, tiers) > cost) ?? null;
}
