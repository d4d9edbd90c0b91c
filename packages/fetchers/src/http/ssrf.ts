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
 * The IPv4 addresses an IPv6 address carries when it is one of the forms that a host, router or relay turns into
 * IPv4 traffic: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible
 * (`::a.b.c.d`, deprecated but still routed by some stacks), NAT64 (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`)
 * and Teredo (`2001:0::`, server and XOR-obfuscated client). Empty for a plain IPv6 address.
 */
export function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4[] {
  const w = ip.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  // `::` and `::1` are IPv6's own unspecified and loopback addresses, not IPv4-compatible ones.
  if (zeros(0, 5) && (w[5] === 0xffff || w[5] === 0) && !(w[5] === 0 && w[6] === 0 && w[7]! <= 1)) return [v4(w[6]!, w[7]!)];
  if (zeros(0, 4) && w[4] === 0xffff && w[5] === 0) return [v4(w[6]!, w[7]!)];
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return [v4(w[6]!, w[7]!)];
  if (w[0] === 0x2002) return [v4(w[1]!, w[2]!)];
  if (w[0] === 0x2001 && w[1] === 0) return [v4(w[2]!, w[3]!), v4(w[6]! ^ 0xffff, w[7]! ^ 0xffff)];
  return [];
}

/**
 * Why an address may not be fetched, or null when it may: the ipaddr.js range name (`loopback`, `private`,
 * `linkLocal` — which holds the 169.254.169.254 metadata address —, `carrierGradeNat`, `multicast`,
 * `unspecified`, `reserved`, `uniqueLocal`, …). Only `unicast` passes. An IPv6 address that carries an IPv4 one
 * (see {@link embeddedIPv4}) is judged by what it carries, so `::7f00:1`, `::ffff:127.0.0.1`, `64:ff9b::a00:1` and
 * `2002:a9fe:a9fe::` are refused while `64:ff9b::808:808` (DNS64 in front of a public site) passes.
 */
export function blockedRangeOf(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'invalid';
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const carried = embeddedIPv4(ip as ipaddr.IPv6);
    if (carried.length > 0) {
      for (const v4 of carried) {
        const range = v4.range();
        if (range !== 'unicast') return range;
      }
      return null;
    }
    // NAT64's local-use prefix (RFC 8215) maps onto whatever the operator chose: nothing public to judge by.
    if (ip.match(LOCAL_USE_NAT64)) return 'reserved';
  }
  const range = ip.range();
  return range === 'unicast' ? null : range;
}

const LOCAL_USE_NAT64 = ipaddr.parseCIDR('64:ff9b:1::/48');

function allowedByPolicy(c: CompiledPolicy, hostname: string, address: string): boolean {
  if (c.off || c.names.has(hostname.toLowerCase())) return true;
  if (c.ranges.length > 0 && ipaddr.isValid(address)) {
    const ip = ipaddr.process(address);
    if (c.ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return true;
  }
  return blockedRangeOf(address) === null;
}

/**
 * A refused address. The message is what gets stored on the link and shown by the API, so it says only that the
 * target is not public; which address the name resolved to, and its range, are in `detail` for the logs (an API
 * caller must not learn the internal network's layout from it).
 */
export class AddressRefusedError extends FetchError {
  override name = 'AddressRefusedError';
  constructor(
    readonly detail: string,
    url?: string,
  ) {
    super('blocked_address', REFUSED_MESSAGE, { url });
  }
}

/** The stored message of every refused address. */
export const REFUSED_MESSAGE = 'refused: the target is not a public address';

function refusal(hostname: string, address: string, url?: string): AddressRefusedError {
  return new AddressRefusedError(`${hostname} resolves to ${address} (${blockedRangeOf(address)})`, url);
}

/** Whether `policy` lets `hostname`, resolved to `address`, be connected to; the refusal when it does not. */
export function checkAddress(policy: AddressPolicy, hostname: string, address: string): AddressRefusedError | null {
  return allowedByPolicy(compile(policy), hostname, address) ? null : refusal(hostname, address);
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
