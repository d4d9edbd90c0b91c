import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { SocksClient } from 'socks';
import { BoundedMap, maskProxyUrl, siteOf } from '@crawler/core';

/**
 * How far an exit failure reaches: `proxy`, the proxy is in trouble (leave it out for every site); `target`, the
 * proxy will not carry this target (its access list refused it, or it fails a site another proxy of its tier reaches)
 * while it may carry others, so another exit of the tier should take the request and the proxy stays up for other
 * sites.
 */
export type ExitFailureScope = 'proxy' | 'target';

/**
 * The exit failed, not the site: the proxy refused or dropped the connection, asked for credentials (407), did not
 * answer in time, or refused the target itself (CONNECT 403, SOCKS5 "not allowed by ruleset"). Its message names the
 * proxy masked (never its credentials).
 */
export class ProxyExitError extends Error {
  override name = 'ProxyExitError';
  readonly code = 'PROXY_EXIT';
  constructor(
    message: string,
    /** The proxy URL as it may be shown (credentials masked). */
    readonly proxy: string,
    /** 407, 403, or the socket error code (ECONNREFUSED, ETIMEDOUT, ...). */
    readonly reason: string,
    /** Whether the proxy failed as a whole or only for this target. @defaultValue 'proxy' */
    readonly scope: ExitFailureScope = 'proxy',
  ) {
    super(message);
  }
}

/**
 * The scope of the exit failure behind `err` (a fetch error wraps the connector's error as its cause): `target` when
 * the proxy refused only that target, else `proxy`.
 */
export function exitFailureScope(err: unknown): ExitFailureScope {
  for (let e: unknown = err, n = 0; e && n < 8; e = (e as { cause?: unknown }).cause, n++) {
    if (e instanceof ProxyExitError) return e.scope;
  }
  return 'proxy';
}

/**
 * The target could not be reached through a working proxy (a SOCKS "host unreachable" or "connection refused", or a
 * failure the proxy has not shown for other sites): the site or the route to it failed, the proxy did its job. `code`
 * is ETIMEDOUT when the proxy did not answer in time.
 */
export class ProxyTargetError extends Error {
  override name = 'ProxyTargetError';
  constructor(
    message: string,
    readonly code: 'ECONNREFUSED' | 'ETIMEDOUT' = 'ECONNREFUSED',
  ) {
    super(message);
  }
}

/** What undici's connector is given (buildConnector.Options, the fields we read). */
interface ConnectOptions {
  hostname: string;
  host?: string;
  protocol: string;
  port: string;
  servername?: string;
}
type Callback = (err: Error | null, socket: Duplex | null) => void;

/**
 * How many different sites a proxy must fail in a row, after accepting the connection, before the failure is the
 * proxy's: a proxy that closes a CONNECT without an answer, answers it 5xx or not in time says the same of a site that
 * is down (Squid answers 503, proxy-chain just closes) as of its own trouble. One site down must not take a proxy, and
 * then its whole tier, out for the fleet; a proxy that fails three sites and tunnels none is the one in trouble. A
 * site is a registrable domain: one dead site's hostnames (www., cdn., img.), schemes and ports count once.
 */
export const PROXY_STALL_TARGETS = 3;

/** Sites remembered (per fetcher) with the proxy that last opened a tunnel to them: the most recent ones. */
export const REACHED_SITES_REMEMBERED = 10_000;

/**
 * What an ambiguous failure (after the proxy took the connection) says: `proxy`, the proxy is in trouble; `target`,
 * this proxy fails a site that another proxy reaches, so another exit should take it; `site`, the site is down.
 */
export type StallVerdict = 'proxy' | 'target' | 'site';

/**
 * Which sites each proxy (by scheme, host and port: a sticky session's URLs are one gateway) has failed since it last
 * opened a tunnel, and which proxy of a tier last reached each site. One per fetcher, shared by its connectors. Only
 * proxies of one tier are evidence about each other: a site that drops a datacenter range and serves a residential
 * one says nothing about the datacenter proxy.
 */
export class ProxyStalls {
  readonly #failed = new Map<string, Set<string>>();
  readonly #reachedVia = new BoundedMap<string, string>(REACHED_SITES_REMEMBERED);

  /** The proxy (of `tier`) opened a tunnel to `host`: it works, and the site answers through it. */
  ok(proxy: string, host: string, tier: string): void {
    this.#failed.delete(proxy);
    this.#reachedVia.set(`${tier}\n${siteOf(host)}`, proxy);
  }

  /** The proxy (of `tier`) failed `host` ambiguously: whose failure that is. */
  failed(proxy: string, host: string, tier: string): StallVerdict {
    const site = siteOf(host);
    const reachedKey = `${tier}\n${site}`;
    let sites = this.#failed.get(proxy);
    if (!sites) this.#failed.set(proxy, (sites = new Set()));
    sites.add(site);
    // Only the count matters: the set need not grow past it.
    if (sites.size > PROXY_STALL_TARGETS) sites.delete(sites.values().next().value as string);
    if (sites.size >= PROXY_STALL_TARGETS) return 'proxy';
    const via = this.#reachedVia.get(reachedKey);
    // The site answers another proxy: this one cannot reach it (down, or its route broken), whatever it says.
    if (via !== undefined && via !== proxy) return 'target';
    // The proxy that reached the site fails it now: the site may be down, and that other proxies fail it too is no
    // evidence against them any more.
    if (via === proxy) this.#reachedVia.delete(reachedKey);
    return 'site';
  }
}

/**
 * An undici `connect` that reaches the target through one proxy: `http://` and `https://` proxies by CONNECT (every
 * target, plain-HTTP ones too, so the proxy never sees a request it could rewrite), `socks5://` through the `socks`
 * client. TLS to an https target runs end to end over the tunnel. The proxy's own address is operator configuration
 * and is not checked by the SSRF guard; the target is, before the request (see HttpFetcher).
 */
export function createProxyConnector(
  proxyUrl: string,
  opts: {
    timeoutMs: number;
    /** Shared by a fetcher's connectors, so a gateway's record survives its sticky sessions. @defaultValue this connector's own */
    stalls?: ProxyStalls;
    /**
     * The exit tier the proxy serves: a site another proxy of the tier reaches and this one fails is this one's
     * failure. @defaultValue none: no other proxy is evidence about this one
     */
    tier?: string;
    /** The context (roots) an https target's chain is verified against. @defaultValue Node's default store */
    secureContext?: tls.SecureContext | undefined;
    /** Offer HTTP/2 besides HTTP/1.1 in ALPN to an https target (undici speaks what the server picks). @defaultValue false */
    allowH2?: boolean;
  },
): (options: ConnectOptions, callback: Callback) => void {
  const proxy = new URL(proxyUrl);
  const shown = maskProxyUrl(proxyUrl);
  const stalls = opts.stalls ?? new ProxyStalls();
  const gateway = `${proxy.protocol}//${proxy.host}`;
  const tier = opts.tier ?? `\0${gateway}`;
  const user = decodeURIComponent(proxy.username);
  const pass = decodeURIComponent(proxy.password);
  const proxyPort = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : proxy.protocol === 'socks5:' ? 1080 : 80));
  const proxyHost = proxy.hostname.startsWith('[') ? proxy.hostname.slice(1, -1) : proxy.hostname;

  return (options, callback) => {
    const targetHost = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
    const targetPort = Number(options.port || (options.protocol === 'https:' ? 443 : 80));
    const tunnel = proxy.protocol === 'socks5:' ? socksTunnel(targetHost, targetPort) : connectTunnel(targetHost, targetPort);
    tunnel.then(
      (socket) => {
        if (options.protocol !== 'https:') return callback(null, socket);
        const secure = tls.connect({
          socket,
          // The name the certificate is checked against: with a socket and no `host`, Node checks it against
          // "localhost", so an IP-literal target (which sends no SNI) would fail every certificate issued for it.
          host: targetHost,
          servername: options.servername ?? (net.isIP(targetHost) ? undefined : targetHost),
          ALPNProtocols: opts.allowH2 ? ['http/1.1', 'h2'] : ['http/1.1'],
          ...(opts.secureContext ? { secureContext: opts.secureContext } : {}),
        });
        secure.once('secureConnect', () => callback(null, secure));
        secure.once('error', (err) => callback(err, null));
      },
      (err: Error) => callback(err, null),
    );
  };

  function exitError(reason: string, detail: string): ProxyExitError {
    return new ProxyExitError(`proxy ${shown} unavailable: ${detail}`, shown, reason);
  }

  /** The error an ambiguous failure stands for, by the stall record's verdict. */
  function judged(verdict: StallVerdict, reason: string, detail: string, authority: string, code: 'ECONNREFUSED' | 'ETIMEDOUT'): Error {
    if (verdict === 'proxy') return exitError(reason, detail);
    if (verdict === 'target') return new ProxyExitError(`proxy ${shown} failed ${authority}, which another proxy reaches: ${detail}`, shown, reason, 'target');
    return new ProxyTargetError(`target ${authority} unreachable through the proxy (${detail})`, code);
  }

  /**
   * The proxy refused to carry `authority`: another exit should take it. A proxy that refuses PROXY_STALL_TARGETS
   * different targets in a row and carries none refuses everything (an address not on the provider's allow list).
   */
  function refusedTarget(reason: string, host: string, authority: string, detail: string): ProxyExitError {
    const everything = stalls.failed(gateway, host, tier) === 'proxy';
    return new ProxyExitError(`proxy ${shown} ${everything ? 'unavailable' : `refused ${authority}`}: ${detail}`, shown, reason, everything ? 'proxy' : 'target');
  }

  async function socksTunnel(host: string, port: number): Promise<Duplex> {
    const authority = net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
    // The TCP connection is made here, so a failure to reach the proxy at all is told from one after it took us.
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ host: proxyHost, port: proxyPort });
      s.setTimeout(opts.timeoutMs, () => {
        s.destroy();
        reject(exitError('ETIMEDOUT', 'ETIMEDOUT'));
      });
      s.once('error', (err: NodeJS.ErrnoException) => reject(exitError(err.code ?? 'EPROXY', err.code ?? 'connection failed')));
      s.once('connect', () => {
        s.setTimeout(0);
        s.removeAllListeners('error');
        resolve(s);
      });
    });
    // The greeting's answer (and the authentication's) come from the proxy alone; past them it is asking the target.
    const proxyStages = user ? 4 : 2;
    let answered = 0;
    const count = (chunk: Buffer) => (answered += chunk.length);
    socket.on('data', count);
    try {
      const { socket: tunnel } = await SocksClient.createConnection({
        proxy: { host: proxyHost, port: proxyPort, type: 5, ...(user ? { userId: user, password: pass } : {}) },
        command: 'connect',
        destination: { host, port },
        timeout: opts.timeoutMs,
        existing_socket: socket,
      });
      socket.off('data', count);
      stalls.ok(gateway, host, tier);
      return tunnel;
    } catch (err) {
      socket.off('data', count);
      socket.destroy();
      const message = (err as Error).message ?? '';
      // SOCKS5 replies 3-6 (network/host unreachable, refused, TTL expired) are about the target.
      if (/rejected connection - (HostUnreachable|NetworkUnreachable|ConnectionRefused|TTLExpired)/.test(message)) {
        throw new ProxyTargetError(`target ${host}:${port} unreachable through the proxy`);
      }
      // Reply 2: the proxy's own ruleset refused the target, which the site never saw.
      if (/rejected connection - NotAllowed/.test(message)) throw refusedTarget('NOTALLOWED', host, authority, 'not allowed by its ruleset');
      const timedOut = /timed? ?out/i.test(message);
      const code = (err as NodeJS.ErrnoException).code ?? (timedOut ? 'ETIMEDOUT' : /auth/i.test(message) ? '407' : 'EPROXY');
      if (code === '407') throw exitError(code, 'authentication refused');
      // A general failure, a close or silence while the proxy asks the target is what many SOCKS servers make of a
      // site that is down (ssh -D answers "general failure" to everything): the same rule as a CONNECT proxy's.
      if (answered < proxyStages) throw exitError(code, code);
      const detail = timedOut ? 'no answer in time' : message || code;
      throw judged(stalls.failed(gateway, host, tier), code, detail, authority, timedOut ? 'ETIMEDOUT' : 'ECONNREFUSED');
    }
  }

  function connectTunnel(host: string, port: number): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      const socket: net.Socket | tls.TLSSocket =
        proxy.protocol === 'https:' ? tls.connect({ host: proxyHost, port: proxyPort, servername: net.isIP(proxyHost) ? undefined : proxyHost }) : net.connect({ host: proxyHost, port: proxyPort });
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        socket.destroy();
        reject(err);
      };
      const authority = net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
      // Until the proxy took the connection, every failure is the proxy's; after it, one it shows for this target
      // alone is the target's (see PROXY_STALL_TARGETS).
      let accepted = false;
      const stalled = (reason: string, detail: string, code: 'ECONNREFUSED' | 'ETIMEDOUT' = 'ECONNREFUSED') =>
        !accepted ? exitError(reason, detail) : judged(stalls.failed(gateway, host, tier), reason, detail, authority, code);
      // Judged only while the CONNECT is open: a tunnel that closes after it opened failed nothing (the stall record
      // must not count every ended keep-alive tunnel as a failed site).
      socket.setTimeout(opts.timeoutMs, () => settled || fail(stalled('ETIMEDOUT', 'no answer in time', 'ETIMEDOUT')));
      socket.once('error', (err: NodeJS.ErrnoException) => settled || fail(stalled(err.code ?? 'EPROXY', err.code ?? 'connection failed')));
      socket.once(proxy.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
        accepted = true;
        const auth = user || pass ? `Proxy-Authorization: Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}\r\n` : '';
        socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
      });
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          if (head.length > 16 * 1024) fail(exitError('EPROTO', 'oversized CONNECT answer'));
          return;
        }
        socket.off('data', onData);
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1] ?? 0);
        if (status === 200) {
          stalls.ok(gateway, host, tier);
          settled = true;
          socket.setTimeout(0);
          socket.removeAllListeners('error');
          const rest = head.subarray(end + 4);
          if (rest.length > 0) socket.unshift(rest);
          resolve(socket);
        } else if (status === 407) fail(exitError('407', 'authentication required (407)'));
        // A CONNECT is answered by the proxy alone (the site never sees it): a 4xx is the proxy's access list refusing
        // the target (Squid's default refuses every port but 443 with 403), not the site blocking us.
        else if (status >= 400 && status < 500) fail(refusedTarget(String(status), host, authority, `CONNECT answered ${status}`));
        else fail(stalled(String(status || 'EPROTO'), `CONNECT answered ${status || 'garbage'}`));
      };
      socket.on('data', onData);
      socket.once('close', () => settled || fail(stalled('ECONNRESET', 'closed during CONNECT')));
    });
  }
}
