import net, { type AddressInfo, type Socket } from 'node:net';

/** Options of a test forward proxy. */
export interface ForwardProxyOptions {
  /**
   * Loopback source address of every outbound connection, so a test site can tell the exits apart the way real sites
   * tell address ranges apart (127.0.2.1 a "datacenter", 127.0.3.1 a "residential" exit). @defaultValue the OS's choice
   */
  localAddress?: string;
  /** `http` (CONNECT) or `socks5`. @defaultValue 'http' */
  protocol?: 'http' | 'socks5';
  /** Credentials the proxy demands (407 / SOCKS5 user-password). @defaultValue none */
  auth?: { user: string; pass: string };
  /** Address to listen on. @defaultValue '127.0.0.1' */
  host?: string;
  /** Port to listen on (a fixed one lets a test bring a killed proxy back). @defaultValue 0 */
  port?: number;
  /**
   * How an HTTP proxy answers a CONNECT whose target cannot be reached: `502` (Bad Gateway), `503` with an error page
   * (Squid's ERR_CONNECT_FAIL) or `close` without a word (proxy-chain). @defaultValue '502'
   */
  onUnreachable?: '502' | '503' | 'close';
  /**
   * The SOCKS5 reply to a target that cannot be reached: 5 (connection refused), or 1 (general failure, what
   * `ssh -D` and several small SOCKS servers answer for any failure). `onUnreachable: 'close'` closes without a reply.
   * @defaultValue 5
   */
  socksUnreachableReply?: number;
  /**
   * The proxy's own access list: a target it returns true for is refused without a connection attempt, as Squid's
   * `http_access deny` does (CONNECT answered 403; SOCKS5 reply 2, not allowed by ruleset). @defaultValue none refused
   */
  refuse?: (host: string, port: number) => boolean;
  /** Names the proxy resolves itself (name → address), as a proxy's own resolver would, without DNS. @defaultValue none */
  hosts?: Record<string, string>;
}

/** A running test forward proxy. */
export interface ForwardProxy {
  /** `http://host:port` or `socks5://host:port`, without credentials. */
  readonly url: string;
  /** The URL with the proxy's credentials (`http://user:pass@host:port`), or `url` when it asks none. */
  readonly authUrl: string;
  readonly port: number;
  /** Tunnels opened to targets. */
  readonly tunnels: number;
  /** Bytes relayed from targets to clients. */
  readonly bytes: number;
  /** Stop listening and cut every open tunnel at once (a proxy that died). */
  kill(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A small forward proxy on loopback for tests: HTTP CONNECT or SOCKS5 (no-auth or user/password, CONNECT only), each
 * outbound connection bound to `localAddress`.
 */
export async function startForwardProxy(opts: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const sockets = new Set<Socket>();
  let tunnels = 0;
  let bytes = 0;
  const protocol = opts.protocol ?? 'http';
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const open = (client: Socket, host: string, port: number, ok: () => void, refused: () => void) => {
    const upstream = net.connect({ host: opts.hosts?.[host] ?? host, port, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) });
    track(upstream);
    upstream.once('connect', () => {
      tunnels++;
      ok();
      upstream.on('data', (c: Buffer) => (bytes += c.length));
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('error', () => {
      refused();
      client.destroy();
    });
    client.once('close', () => upstream.destroy());
  };

  const server = net.createServer((client) => {
    track(client);
    if (protocol === 'socks5') return socks5(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      client.off('data', onData);
      const lines = head.subarray(0, end).toString('latin1').split('\r\n');
      const m = /^CONNECT (\S+):(\d+) HTTP\/1\.[01]$/.exec(lines[0] ?? '');
      if (!m) return void client.end('HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n');
      if (opts.auth) {
        const want = `Basic ${Buffer.from(`${opts.auth.user}:${opts.auth.pass}`).toString('base64')}`;
        const got = lines.find((l) => /^proxy-authorization:/i.test(l))?.replace(/^proxy-authorization:\s*/i, '');
        if (got !== want) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      }
      const host = m[1]!.replace(/^\[|\]$/g, '');
      if (opts.refuse?.(host, Number(m[2]))) return void client.end('HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: 26\r\n\r\n<h1>ERR_ACCESS_DENIED</h1>\n');
      const unreachable = () => {
        if (opts.onUnreachable === 'close') client.destroy();
        else if (opts.onUnreachable === '503') client.end('HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\nContent-Length: 25\r\n\r\n<h1>ERR_CONNECT_FAIL</h1>\n');
        else client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
      };
      open(client, host, Number(m[2]), () => client.write('HTTP/1.1 200 Connection Established\r\n\r\n'), unreachable);
    };
    client.on('data', onData);
  });

  function socks5(client: Socket): void {
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'auth' | 'request' = 'greeting';
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (stage === 'greeting') {
        if (buf.length < 2 || buf.length < 2 + buf[1]!) return;
        const methods = [...buf.subarray(2, 2 + buf[1]!)];
        buf = buf.subarray(2 + buf[1]!);
        const method = opts.auth ? 2 : 0;
        if (!methods.includes(method)) return void client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, method]));
        stage = opts.auth ? 'auth' : 'request';
      }
      if (stage === 'auth') {
        if (buf.length < 2) return;
        const ulen = buf[1]!;
        if (buf.length < 3 + ulen) return;
        const plen = buf[2 + ulen]!;
        if (buf.length < 3 + ulen + plen) return;
        const user = buf.subarray(2, 2 + ulen).toString();
        const pass = buf.subarray(3 + ulen, 3 + ulen + plen).toString();
        buf = buf.subarray(3 + ulen + plen);
        if (user !== opts.auth!.user || pass !== opts.auth!.pass) return void client.end(Buffer.from([1, 1]));
        client.write(Buffer.from([1, 0]));
        stage = 'request';
      }
      if (stage === 'request') {
        if (buf.length < 5) return;
        const atyp = buf[3]!;
        const addrLen = atyp === 1 ? 4 : atyp === 4 ? 16 : 1 + buf[4]!;
        if (buf.length < 4 + addrLen + 2) return;
        const host =
          atyp === 1 ? [...buf.subarray(4, 8)].join('.') : atyp === 3 ? buf.subarray(5, 5 + buf[4]!).toString() : net.isIPv6('::') ? formatV6(buf.subarray(4, 20)) : '';
        const port = buf.readUInt16BE(4 + addrLen);
        client.off('data', onData);
        const reply = (code: number) => Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
        if (opts.refuse?.(host, port)) return void client.end(reply(2));
        const unreachable = () => (opts.onUnreachable === 'close' ? client.destroy() : client.end(reply(opts.socksUnreachableReply ?? 5)));
        open(client, host, port, () => client.write(reply(0)), unreachable);
      }
    };
    client.on('data', onData);
  }

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `${protocol}://${opts.host ?? '127.0.0.1'}:${port}`;
  const authUrl = opts.auth ? `${protocol}://${encodeURIComponent(opts.auth.user)}:${encodeURIComponent(opts.auth.pass)}@${opts.host ?? '127.0.0.1'}:${port}` : base;
  let closed: Promise<void> | undefined;
  const stop = () => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
    return closed;
  };
  return {
    url: base,
    authUrl,
    port,
    get tunnels() {
      return tunnels;
    },
    get bytes() {
      return bytes;
    },
    kill: stop,
    close: stop,
  };
}

function formatV6(b: Buffer): string {
  const parts: string[] = [];
  for (let i = 0; i < 16; i += 2) parts.push(b.readUInt16BE(i).toString(16));
  return parts.join(':');
}
