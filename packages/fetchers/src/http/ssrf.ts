import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup as dnsLookupAsync } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { FetchError } from '../errors.js';

/** Who may be fetched. With the guard on, only public unicast addresses are. */
export interface AddressPolicy {
  allowPrivateNetworks: boolean;
  /** Exact host names, IP literals or CIDR ranges let through although not public. */
  allowHosts: string[];
}

interface CompiledPolicy {
  off: boolean;
  names: Set<string>;
  ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

const compiled = new WeakMap<AddressPolicy, CompiledPolicy>();

function compile(policy: AddressPolicy): CompiledPolicy {
  let c = compiled.get(policy);
  if (!c) {
    const names = new Set<string>();
    const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
    for (const raw of policy.allowHosts) {
      const h = raw.trim().toLowerCase();
      if (ipaddr.isValidCIDR(h)) ranges.push(ipaddr.parseCIDR(h));
      else if (ipaddr.isValid(h)) ranges.push([ipaddr.process(h), ipaddr.process(h).kind() === 'ipv4' ? 32 : 128]);
      else names.add(h);
    }
    c = { off: policy.allowPrivateNetworks, names, ranges };
    compiled.set(policy, c);
  }
  return c;
}

/**
 * Why an address may not be fetched, or null when it may: the ipaddr.js range name (`loopback`, `private`,
 * `linkLocal` — which holds the 169.254.169.254 metadata address —, `carrierGradeNat`, `multicast`,
 * `unspecified`, `reserved`, `uniqueLocal`, …). Only `unicast` passes. IPv4-mapped IPv6 is judged as IPv4,
 * so `::ffff:127.0.0.1` is loopback.
 */
export function blockedRangeOf(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'invalid';
  const range = ipaddr.process(address).range();
  return range === 'unicast' ? null : range;
}

function allowedByPolicy(c: CompiledPolicy, hostname: string, address: string): boolean {
  if (c.off || c.names.has(hostname.toLowerCase())) return true;
  if (c.ranges.length > 0 && ipaddr.isValid(address)) {
    const ip = ipaddr.process(address);
    if (c.ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return true;
  }
  return blockedRangeOf(address) === null;
}

function refusal(hostname: string, address: string, url?: string): FetchError {
  return new FetchError('blocked_address', `${hostname} resolves to ${address} (${blockedRangeOf(address)}), which is not a public address`, {
    url,
  });
}

/** Host name of a URL without IPv6 brackets. */
export function bareHostname(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Refuse a URL whose host is a non-public IP literal. With `resolve`, also resolve a name and refuse it when
 * ANY of its addresses is not public (a name that mixes public and private answers is a rebinding trick).
 * Throws `blocked_address` or `dns_error`.
 */
export async function assertAllowedTarget(url: URL, policy: AddressPolicy, opts: { resolve: boolean }): Promise<void> {
  const c = compile(policy);
  if (c.off) return;
  const host = bareHostname(url);
  if (isIP(host)) {
    if (!allowedByPolicy(c, host, host)) throw refusal(host, host, url.href);
    return;
  }
  if (!opts.resolve || c.names.has(host.toLowerCase())) return;
  let addresses: LookupAddress[];
  try {
    addresses = await dnsLookupAsync(host, { all: true });
  } catch (cause) {
    throw new FetchError('dns_error', `cannot resolve ${host}`, { url: url.href, cause });
  }
  for (const a of addresses) if (!allowedByPolicy(c, host, a.address)) throw refusal(host, a.address, url.href);
}

/**
 * A `lookup` for the socket layer that refuses non-public answers at connect time, so a name that resolved to a
 * public address during a check and to 127.0.0.1 a moment later (DNS rebinding) still cannot be reached.
 */
export function createGuardedLookup(policy: AddressPolicy): LookupFunction {
  const c = compile(policy);
  return (hostname: string, options: LookupOptions, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', undefined);
      const bad = addresses.find((a) => !allowedByPolicy(c, hostname, a.address));
      if (bad) return callback(refusal(hostname, bad.address) as unknown as NodeJS.ErrnoException, '', undefined);
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', undefined);
      callback(null, first.address, first.family);
    });
  };
}
