import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect as netConnect, isIP, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '@crawler/core';
import { FetchError, isFetchErrorCode } from '../errors.js';
import { AddressRefusedError, assertAllowedTarget, checkAddress, createGuardedLookup, type AddressPolicy } from '../http/ssrf.js';
import { ProxyExitError, ProxyStalls, createProxyConnector } from '../http/proxy-connector.js';
import { MAX_RESPONSE_HEADER_BYTES } from '../options.js';

/** Settings of the browsers' egress proxy. */
export interface EgressProxyOptions {
  /** Who may be connected to: the same policy, and the same check, as the plain-HTTP fetcher's. */
  policy: AddressPolicy;
  /** TCP connect timeout towards a site. @defaultValue 10000 */
  connectTimeoutMs?: number;
  /** A tunnel or upstream socket silent this long is closed (pages are short-lived; sockets must not pile up). @defaultValue 120000 */
  idleTimeoutMs?: number;
  /**
   * Bytes relayed towards Chromium per response (plain HTTP) or per tunnel (HTTPS, WebSockets) before the connection
   * is cut, like the plain-HTTP fetcher's body limit: an endless stream ends here, not at the fetch's deadline.
   * @defaultValue 10485760 (10 MiB)
   */
  maxResponseBytes?: number;
  logger: Logger;
}

/** What the proxy has done, for tests and metrics. */
export interface EgressStats {
  /** Connections (tunnels and forwarded requests) let through. */
  allowed: number;
  /** Connections refused because the target is not public. */
  refused: number;
  /** Connections that failed towards an allowed target (refused, reset, DNS, timeout). */
  failed: number;
  /** Responses or tunnels cut because they went past `maxResponseBytes`. */
  cut: number;
  /** Loopback listeners open for upstream proxies (one per exit that a browser context uses). */
  exitListeners: number;
}


/** Response header the proxy sets on its own answers, so a fetcher can tell them from a site's. */
export const EGRESS_HEADER = 'x-crawler-egress';

// Recent failures by `host:port`: Chromium reports a refused CONNECT only as ERR_TUNNEL_CONNECTION_FAILED, so the
// fetcher asks the proxy why. Bounded: a page that probes thousands of ports must not grow it.
const MAX_REMEMBERED_FAILURES = 256;

// Hop-by-hop headers (RFC 9110 §7.6.1) plus Chromium's `proxy-connection`: never forwarded.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * The one way out for Chromium: an HTTP proxy on loopback inside the fetcher process. Plain-HTTP requests are
 * forwarded, HTTPS and WebSockets are tunnelled with CONNECT; either way the target's name is resolved HERE, by the
 * plain-HTTP fetcher's guarded lookup, and the socket connects to exactly the address that was checked — Chromium
 * never resolves or connects to a site itself, so neither a redirect, a subresource, a WebSocket nor a name that
 * rebinds between two lookups reaches a non-public address.
 */
export class EgressProxy {
  readonly #server: Server;
  readonly #policy: AddressPolicy;
  readonly #lookup: ReturnType<typeof createGuardedLookup>;
  readonly #connectTimeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #maxResponseBytes: number;
  readonly #log: Logger;
  readonly #agent: Agent;
  readonly #sockets = new Set<Duplex>();
  readonly #failures = new Map<string, FetchError>();
  readonly #stats: Omit<EgressStats, 'exitListeners'> = { allowed: 0, refused: 0, failed: 0, cut: 0 };
  // Marks the proxy's own answers: a site cannot forge one to make us misreport it.
  readonly #token = randomBytes(8).toString('hex');
  /** One loopback listener per upstream proxy (a browser context's exit), made on first use. */
  readonly #exits = new Map<string, Promise<{ server: Server; url: string }>>();
  /** The exit tier of each upstream proxy: a site another proxy of the tier reaches and this one fails is this one's failure. */
  readonly #exitTiers = new Map<string, string>();
  /** When each exit's listener was last asked for. */
  readonly #exitAskedAt = new Map<string, number>();
  /** Which targets each upstream proxy failed lately: what tells a proxy in trouble from a site down. */
  readonly #stalls = new ProxyStalls();
  #closed: Promise<void> | undefined;

  private constructor(opts: EgressProxyOptions) {
    this.#policy = opts.policy;
    this.#lookup = createGuardedLookup(opts.policy);
    this.#connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
    this.#idleTimeoutMs = opts.idleTimeoutMs ?? 120_000;
    this.#maxResponseBytes = opts.maxResponseBytes ?? 10 * 1024 * 1024;
    this.#log = opts.logger;
    this.#agent = new Agent({ keepAlive: true, maxSockets: 16, timeout: this.#idleTimeoutMs });
    this.#server = createServer((req, res) => this.#forward(req, res));
    this.#server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#tunnel(req, socket, head));
    // Chromium tunnels WebSockets with CONNECT; an Upgrade sent to the proxy itself is not something it does.
    this.#server.on('upgrade', (_req: IncomingMessage, socket: Duplex) => socket.end('HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\n\r\n'));
    this.#server.on('connection', (s: Socket) => this.#track(s));
    this.#server.on('clientError', (_err, socket) => socket.destroy());
  }

  /** Start a proxy on 127.0.0.1 and an ephemeral port. */
  static async start(opts: EgressProxyOptions): Promise<EgressProxy> {
    const proxy = new EgressProxy(opts);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(0, '127.0.0.1', () => {
        proxy.#server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  /** `http://127.0.0.1:port`, for Chromium's `--proxy-server`. */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /**
   * The loopback address a browser context uses to leave through `proxyUrl` (its Playwright `proxy.server`): a
   * listener of this proxy whose connections go on through that upstream proxy. Every target is still checked here
   * first, names resolved by this process: the upstream proxy resolves them again, so only public answers pass.
   * `tier`: the exit tier the proxy serves, so its failures are judged against its tier's other proxies, as plain
   * HTTP's are (one that fails a site another proxy of the tier reached is at fault for that site).
   */
  exitUrl(proxyUrl: string, tier?: string): Promise<string> {
    this.#exitAskedAt.set(proxyUrl, Date.now());
    if (tier !== undefined) this.#exitTiers.set(proxyUrl, tier);
    let started = this.#exits.get(proxyUrl);
    if (!started) {
      const server = createServer((req, res) => this.#forward(req, res, proxyUrl));
      server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#tunnel(req, socket, head, proxyUrl));
      server.on('upgrade', (_req: IncomingMessage, socket: Duplex) => socket.end('HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\n\r\n'));
      server.on('connection', (s: Socket) => this.#track(s));
      server.on('clientError', (_err, socket) => socket.destroy());
      started = new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
      });
      this.#exits.set(proxyUrl, started);
    }
    return started.then((e) => e.url);
  }

  /**
   * Close the listeners of exits no browser context uses any more (`inUse`: the upstream URLs of the live contexts),
   * except those asked for in the last `graceMs` (the context that will use one may still be starting). A
   * sticky-session tier gives every site its own upstream URL, so without this a worker would keep a listening socket
   * per site it ever crawled. Connections already open run to their end.
   */
  releaseExits(inUse: ReadonlySet<string>, graceMs: number): void {
    const keepAfter = Date.now() - graceMs;
    for (const [proxyUrl, started] of this.#exits) {
      if (inUse.has(proxyUrl) || (this.#exitAskedAt.get(proxyUrl) ?? 0) > keepAfter) continue;
      this.#exits.delete(proxyUrl);
      this.#exitAskedAt.delete(proxyUrl);
      this.#exitTiers.delete(proxyUrl);
      void started.then(({ server }) => server.close()).catch(() => undefined);
    }
  }

  /** A connection to `host:port` through `proxyUrl`, after the target passed the guard. */
  async #viaUpstream(proxyUrl: string, host: string, port: number): Promise<Duplex> {
    await assertAllowedTarget(new URL(`http://${isIP(host) === 6 ? `[${host}]` : host}:${port}/`), this.#policy, { resolve: true });
    const tier = this.#exitTiers.get(proxyUrl);
    const connect = createProxyConnector(proxyUrl, { timeoutMs: this.#connectTimeoutMs, stalls: this.#stalls, ...(tier !== undefined ? { tier } : {}) });
    return new Promise((resolve, reject) => connect({ hostname: host, port: String(port), protocol: 'http:' }, (err, socket) => (err || !socket ? reject(err) : resolve(socket))));
  }

  stats(): EgressStats {
    return { ...this.#stats, exitListeners: this.#exits.size };
  }

  /**
   * Why the proxy refused or failed a connection to `url`'s host and port, if it did recently: what a fetcher
   * reports instead of Chromium's ERR_TUNNEL_CONNECTION_FAILED.
   */
  failureFor(url: string): FetchError | undefined {
    try {
      const u = new URL(url);
      return this.#failures.get(authorityOf(u.hostname, u.port || (u.protocol === 'https:' || u.protocol === 'wss:' ? '443' : '80')));
    } catch {
      return undefined;
    }
  }

  /** The error a proxy's own answer stands for (a refusal or a failure it met), or null for a site's response. */
  errorOfResponse(headers: Record<string, string>, url: string): FetchError | null {
    const mark = headers[EGRESS_HEADER];
    if (!mark?.startsWith(`${this.#token} `)) return null;
    const code = mark.slice(this.#token.length + 1);
    return this.failureFor(url) ?? new FetchError(isFetchErrorCode(code) ? code : 'network_error', 'the browser could not reach the target', { url });
  }

  /** Stop listening and cut every open tunnel. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      const exits = [...this.#exits.values()];
      void Promise.allSettled(exits.map((e) => e.then(({ server }) => new Promise<void>((r) => server.close(() => r())))))
        .then(() => new Promise<void>((r) => this.#server.close(() => r())))
        .then(resolve);
      for (const s of this.#sockets) s.destroy();
      this.#agent.destroy();
    });
    return this.#closed;
  }

  #track(s: Duplex): void {
    this.#sockets.add(s);
    s.on('close', () => this.#sockets.delete(s));
  }

  /** Check a literal address up front; a name is checked by the guarded lookup at connect time. */
  #literalRefusal(host: string): AddressRefusedError | null {
    return isIP(host) ? checkAddress(this.#policy, host, host) : null;
  }

  #remember(authority: string, err: FetchError): void {
    if (err instanceof AddressRefusedError) {
      this.#stats.refused++;
      // The page that tried is logged at warn by the fetcher (background-requests.ts); the proxy cannot tell pages apart.
      this.#log.debug({ target: authority, detail: err.detail }, 'browser egress refused: not a public address');
    } else {
      this.#stats.failed++;
    }
    this.#failures.delete(authority);
    this.#failures.set(authority, err);
    if (this.#failures.size > MAX_REMEMBERED_FAILURES) this.#failures.delete(this.#failures.keys().next().value as string);
  }

  /**
   * Count what `source` relays towards Chromium; past the cap, cut it and remember `too_large` for its authority so
   * the fetcher can say why its page's document broke off.
   */
  #capped(source: Duplex | IncomingMessage, authority: string, what: string, cut: () => void): void {
    let bytes = 0;
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= this.#maxResponseBytes) return;
      source.off('data', onData);
      this.#stats.cut++;
      this.#log.warn({ target: what, maxBytes: this.#maxResponseBytes }, 'browser egress cut a response past the byte cap');
      this.#failures.delete(authority);
      this.#failures.set(authority, new FetchError('too_large', `the response exceeds ${this.#maxResponseBytes} bytes`));
      cut();
    };
    source.on('data', onData);
  }

  #tunnel(req: IncomingMessage, client: Duplex, head: Buffer, proxyUrl?: string): void {
    this.#track(client);
    client.on('error', () => undefined);
    const target = parseAuthority(req.url ?? '');
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const authority = authorityOf(target.host, String(target.port));
    const fail = (err: FetchError) => {
      this.#remember(authority, err);
      const status = err.code === 'blocked_address' ? '403 Forbidden' : err.code === 'timeout' ? '504 Gateway Timeout' : '502 Bad Gateway';
      if (client.writable) client.end(`HTTP/1.1 ${status}\r\n${EGRESS_HEADER}: ${this.#token} ${err.code}\r\ncontent-length: 0\r\n\r\n`);
      else client.destroy();
    };
    const refused = this.#literalRefusal(target.host);
    if (refused) return fail(refused);
    if (proxyUrl) {
      this.#viaUpstream(proxyUrl, target.host, target.port).then(
        (upstream) => {
          this.#track(upstream);
          this.#relay(client, upstream, head, authority);
        },
        (err: unknown) => fail(asFetchError(err, authority)),
      );
      return;
    }
    const upstream = netConnect({ host: target.host, port: target.port, lookup: this.#lookup, timeout: this.#connectTimeoutMs });
    this.#track(upstream);
    let connected = false;
    upstream.once('timeout', () => {
      if (!connected) upstream.destroy(new FetchError('timeout', `connect to ${authority} timed out`));
    });
    upstream.once('error', (err) => {
      if (connected) {
        client.destroy();
        return;
      }
      fail(asFetchError(err, authority));
    });
    upstream.once('connect', () => {
      connected = true;
      this.#relay(client, upstream, head, authority);
    });
  }

  /** A tunnel is open: tell Chromium, then relay both ways, capped. */
  #relay(client: Duplex, upstream: Duplex, head: Buffer, authority: string): void {
    this.#stats.allowed++;
    this.#failures.delete(authority);
    upstream.on('error', () => client.destroy());
    if ('setTimeout' in upstream && typeof upstream.setTimeout === 'function') (upstream as Socket).setTimeout(this.#idleTimeoutMs, () => upstream.destroy());
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    this.#capped(upstream, authority, `tunnel to ${authority}`, () => {
      upstream.destroy();
      client.destroy();
    });
    upstream.pipe(client);
    client.pipe(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  #forward(req: IncomingMessage, res: ServerResponse, proxyUrl?: string): void {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-length': '0' }).end();
      return;
    }
    // HTTPS and WebSockets come as CONNECT; anything else in absolute form is not for a browser to send.
    if (target.protocol !== 'http:') {
      res.writeHead(400, { 'content-length': '0' }).end();
      return;
    }
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    const port = Number(target.port || 80);
    const authority = authorityOf(host, String(port));
    const fail = (err: FetchError) => {
      this.#remember(authority, err);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // A refusal is a 204: a navigation answered with 204 does not replace the page's document, so a download link or
      // a script sending the page into private space leaves the rendered page as it was (the fetcher's own navigation
      // still fails: it recognises the marked answer).
      if (err.code === 'blocked_address') {
        res.writeHead(204, { [EGRESS_HEADER]: `${this.#token} ${err.code}`, 'cache-control': 'no-store' }).end();
        return;
      }
      const status = err.code === 'timeout' ? 504 : 502;
      res.writeHead(status, { [EGRESS_HEADER]: `${this.#token} ${err.code}`, 'content-type': 'text/plain', 'cache-control': 'no-store' });
      res.end('the target could not be reached');
    };
    const refused = this.#literalRefusal(host);
    if (refused) {
      req.resume();
      return fail(refused);
    }
    if (proxyUrl) {
      // Through the upstream proxy: the target checked (and resolved) here first, then one tunnel per request.
      req.pause();
      this.#viaUpstream(proxyUrl, host, port).then(
        (socket) => this.#send(req, res, target, authority, fail, { createConnection: () => socket as Socket }),
        (err: unknown) => {
          req.resume();
          fail(asFetchError(err, authority));
        },
      );
      return;
    }
    this.#send(req, res, target, authority, fail, { lookup: this.#lookup, agent: this.#agent });
  }

  #send(req: IncomingMessage, res: ServerResponse, target: URL, authority: string, fail: (err: FetchError) => void, how: { lookup?: ReturnType<typeof createGuardedLookup>; agent?: Agent; createConnection?: () => Socket }): void {
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    const port = Number(target.port || 80);
    const upstream = httpRequest({
      host,
      port,
      method: req.method,
      path: target.pathname + target.search,
      headers: forwardableHeaders(req.rawHeaders),
      // As large as Chromium itself takes, not Node's 16 KiB: the proxy must not refuse what the browser would load.
      maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
      // Read as leniently as Chromium reads a response (a bare LF for CRLF, as old CGI scripts write): with Node's strict
      // parser the browser failed every http:// page that plain HTTP had sent it for, as HPE_CR_EXPECTED. The request
      // leaving here is Chromium's own, re-sent; only the response's parsing is relaxed.
      insecureHTTPParser: true,
      ...how,
      timeout: this.#connectTimeoutMs,
    });
    let answered = false;
    upstream.on('socket', (s) => {
      // A pooled socket is already connected; only a new one can time out connecting.
      if (!s.connecting) this.#stats.allowed++;
      else s.once('connect', () => this.#stats.allowed++);
    });
    upstream.on('timeout', () => {
      if (!answered) upstream.destroy(new FetchError('timeout', `no answer from ${authority}`));
    });
    upstream.on('error', (err) => fail(asFetchError(err, authority)));
    upstream.on('response', (up) => {
      answered = true;
      upstream.setTimeout(this.#idleTimeoutMs);
      this.#failures.delete(authority);
      res.writeHead(up.statusCode ?? 502, up.statusMessage, forwardableHeaders(up.rawHeaders));
      this.#capped(up, authority, target.href, () => {
        upstream.destroy();
        res.destroy();
      });
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}

function authorityOf(host: string, port: string): string {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return `${bare.toLowerCase()}:${port}`;
}

/** `host:port` or `[v6]:port` of a CONNECT request, or null. */
function parseAuthority(raw: string): { host: string; port: number } | null {
  const m = raw.match(/^\[([^\]]+)\]:(\d+)$/) ?? raw.match(/^([^:[\]]+):(\d+)$/);
  if (!m) return null;
  const port = Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return null;
  return { host: m[1]!, port };
}

/** Raw header pairs minus hop-by-hop ones and those a `Connection` header names. */
function forwardableHeaders(raw: string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') for (const t of raw[i + 1]!.split(',')) named.add(t.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || named.has(name)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/** The guarded lookup's refusal, or a network failure with a stable code. */
function asFetchError(err: unknown, authority: string): FetchError {
  if (err instanceof FetchError) return err;
  // The upstream proxy failed, not the site (its message names it masked, never its credentials).
  if (err instanceof ProxyExitError) return new FetchError('proxy_unavailable', err.message, { cause: err });
  const code = (err as { code?: string }).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new FetchError('dns_error', `cannot resolve ${authority}`, { cause: err });
  if (code === 'ETIMEDOUT') return new FetchError('timeout', `connect to ${authority} timed out`, { cause: err });
  return new FetchError('network_error', `cannot connect to ${authority}${code ? ` (${code})` : ''}`, { cause: err });
}
