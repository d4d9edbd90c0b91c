import type { Clock } from '@crawler/core';
import { createTestCa, type TestCa } from '@crawler/testkit';
import { startSimSite, type SimSite, type SiteSpec, type SiteStats } from './sim-site.js';
import type { ClientClass, SiteKind } from './site-kinds.js';

/** A simulated web: its sites and the clock that tells them the (simulated) time. */
export interface SimWebSpec {
  sites: SiteSpec[];
  /** Time for kind changes and rate-limit windows; a ManualClock makes weeks pass in minutes. @defaultValue systemClock */
  clock?: Clock;
  /**
   * First loopback address to use; site i gets the i-th address after it, so each site is its own domain.
   * @defaultValue '127.0.0.2' (127.0.0.1 is left to ordinary tests)
   */
  firstHost?: string;
  /** The port every site listens on (each on its own address). @defaultValue 0: a free port per site */
  port?: number;
  /**
   * Serve every site over HTTPS, with a certificate a CA made at start issues for its address (SiteSpec.certificate),
   * and a plain-HTTP listener beside it (SimSite.plainOrigin). Trust `SimWeb.ca` to crawl it. @defaultValue false
   */
  https?: boolean;
  /** The CA that signs the sites' certificates, to share one between webs. @defaultValue a new one (with `https`) */
  ca?: TestCa;
}

/** Counters of the whole simulated web, and per site. */
export interface SimWebStats {
  sites: SiteStats[];
  totals: {
    requests: Record<ClientClass, number>;
    pageRequests: number;
    blocked: number;
    served: number;
    byKind: Partial<Record<SiteKind, { sites: number; pageRequests: number; blocked: number; served: number }>>;
  };
}

/** A running simulated web. */
export interface SimWeb {
  readonly sites: readonly SimSite[];
  /** The CA of an HTTPS web (SimWebSpec.https): its `cert` is the PEM to trust (NODE_EXTRA_CA_CERTS); undefined without HTTPS. */
  readonly ca: TestCa | undefined;
  /** The site serving `domain` (its loopback address), if any. */
  site(domain: string): SimSite | undefined;
  stats(): SimWebStats;
  /** Stop every site. Idempotent. */
  close(): Promise<void>;
}

/** The n-th loopback address after `first` (127.0.0.2 + 1 → 127.0.0.3), skipping .0 and .255 of each /24. */
export function loopbackAddress(first: string, n: number): string {
  const parts = first.split('.').map(Number);
  if (parts.length !== 4 || parts[0] !== 127 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new RangeError(`firstHost must be an IPv4 address in 127.0.0.0/8, got ${first}`);
  }
  let value = ((parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
  for (let i = 0; i < n; ) {
    value += 1;
    const last = value & 0xff;
    if (last !== 0 && last !== 255) i += 1;
  }
  if (value > 0xfffffe) throw new RangeError('ran out of loopback addresses');
  return `127.${(value >> 16) & 0xff}.${(value >> 8) & 0xff}.${value & 0xff}`;
}

/**
 * Start every site of `spec`, each on its own loopback address and an ephemeral port: to the crawler each is a
 * domain of its own. Sites start in parallel; if one fails to bind, the ones already up are closed again.
 */
export async function startSimWeb(spec: SimWebSpec): Promise<SimWeb> {
  const first = spec.firstHost ?? '127.0.0.2';
  const ca = spec.https ? (spec.ca ?? createTestCa('sim-web test CA')) : undefined;
  // Sites know each other once all are up: a `traps` site redirects off itself to another.
  let all: SimSite[] = [];
  const peers = () => all;
  const settled = await Promise.allSettled(
    spec.sites.map((s, i) => startSimSite(s, { host: loopbackAddress(first, i), index: i, clock: spec.clock, port: spec.port, peers, ...(ca ? { tls: { ca } } : {}) })),
  );
  const sites = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(sites.map((s) => s.close()));
    throw failed.reason;
  }
  all = sites;
  const byDomain = new Map(sites.map((s) => [s.domain, s]));
  let closing: Promise<void> | undefined;
  return {
    sites,
    ca,
    site: (domain) => byDomain.get(domain),
    stats: () => summarize(sites.map((s) => s.stats())),
    close: () => (closing ??= Promise.all(sites.map((s) => s.close())).then(() => undefined)),
  };
}

function summarize(sites: SiteStats[]): SimWebStats {
  const totals: SimWebStats['totals'] = { requests: { plain: 0, browser: 0 }, pageRequests: 0, blocked: 0, served: 0, byKind: {} };
  for (const s of sites) {
    totals.requests.plain += s.requests.plain;
    totals.requests.browser += s.requests.browser;
    totals.pageRequests += s.pageRequests;
    totals.blocked += s.blocked;
    totals.served += s.served;
    const k = (totals.byKind[s.initialKind] ??= { sites: 0, pageRequests: 0, blocked: 0, served: 0 });
    k.sites += 1;
    k.pageRequests += s.pageRequests;
    k.blocked += s.blocked;
    k.served += s.served;
  }
  return { sites, totals };
}
