import { Readable } from 'node:stream';
import tls from 'node:tls';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent } from 'undici';
import { BoundedMap, FETCHERS, applySetCookie, cookieHeaderOf, type CookieJar } from '@crawler/core';
import { BaseFetcher, parseFetchUrl, type PreparedRequest } from '../base-fetcher.js';
import type { FetchRequest, FetchResult } from '../contract.js';
import { FetchError } from '../errors.js';
import { MAX_RESPONSE_HEADER_BYTES, resolveFetchersOptions, withoutNodeRoots, type FetchersOptions, type ResolvedFetchersOptions } from '../options.js';
import { acceptEncodingFor, browserLikeHeaders } from './browser-headers.js';
import { createDecoder, decodeText, decodingFailure, inflateStrayGzip, isTextualType, looksEncoded, mimeTypeOf, sniffCharset, unknownCodings } from './decode.js';
import { assertAllowedTarget, createGuardedLookup, type AddressPolicy } from './ssrf.js';
import { refusedHead, refusedHttp1, translateUndiciError } from './translate-error.js';
import { ProxyExitError, ProxyStalls, createProxyConnector } from './proxy-connector.js';

/** A plain-HTTP request may tighten the per-phase timeouts (the 3 s probe does). */
export interface HttpFetchRequest extends FetchRequest {
  /** Time allowed until response headers arrive, per hop. */
  headersTimeoutMs?: number;
  /** Longest silence allowed between two body chunks. */
  bodyTimeoutMs?: number;
}

/** Keep-alive pools kept for proxy URLs (the most recently used); each holds at most its idle sockets. */
export const PROXY_POOLS_KEPT = 64;

/** Origins remembered (per fetcher, the most recently used) as refusing HTTP/1.1, asked over HTTP/2 from the start. */
export const H2_ONLY_ORIGINS_REMEMBERED = 10_000;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NO_BODY_STATUSES = new Set([204, 304]);
// Credentials must not follow a redirect to another origin.
const ORIGIN_BOUND_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * simple_http: undici with a keep-alive pool, browser-like headers, redirects followed by hand (every hop
 * re-checked by the SSRF guard), decompression counted against `maxBytes`, and charset-aware decoding.
 */
export class HttpFetcher extends BaseFetcher {
  readonly name: string = FETCHERS.simpleHttp;
  readonly #agent: Agent;
  /**
   * The same pool's settings with HTTP/2 offered in ALPN, for origins that refuse HTTP/1.1 (HTTP/2-only listeners,
   * which browsers load): made on first use. HTTP/1.1 stays the default, as undici's HTTP/2 client is the younger one.
   */
  #h2Agent: Agent | undefined;
  /** Origins that refused HTTP/1.1 by ALPN: their requests go to the HTTP/2 pool without being refused first. */
  readonly #h2Only = new BoundedMap<string, true>(H2_ONLY_ORIGINS_REMEMBERED);
  /**
   * One keep-alive pool per proxy URL, made on first use, for the URLs used most recently: a sticky-session tier gives
   * every site its own URL, so a pool per URL ever used would grow with the sites crawled.
   */
  readonly #proxyAgents = new Map<string, Agent>();
  /** Which targets each proxy failed lately, shared by the pools: what tells a proxy in trouble from a site down. */
  readonly #stalls = new ProxyStalls();
  readonly #policy: AddressPolicy;
  readonly #defaultHeaders: Record<string, string>;
  /**
   * Node's roots plus `extraCaCerts` that are not among them, built once; undefined for Node's default store (which
   * NODE_EXTRA_CA_CERTS already feeds). Given to each connection as a context, not as `ca`: a `ca` of the system
   * bundle (288 certificates with Node's) built a context for every TLS connection, 47 ms of CPU each.
   */
  readonly #secureContext: tls.SecureContext | undefined;
  #closed: Promise<void> | undefined;

  constructor(options: ResolvedFetchersOptions) {
    super(options, 'http-fetcher');
    this.#policy = { allowPrivateNetworks: options.allowPrivateNetworks, allowHosts: options.allowHosts };
    this.#defaultHeaders = browserLikeHeaders(options.userAgent);
    // A `ca` replaces the default store rather than adding to it: Node's bundled roots go in with the extra ones.
    const extra = withoutNodeRoots(options.extraCaCerts);
    this.#secureContext = extra.length > 0 ? tls.createSecureContext({ ca: [...tls.rootCertificates, ...extra] }) : undefined;
    this.#agent = this.#directAgent(false);
  }

  #directAgent(allowH2: boolean): Agent {
    const options = this.options;
    return new Agent({
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 10_000,
      // Read by the HTTP/1.1 parser only; over HTTP/2 Node's header-list limit (64 KiB, measured: 60 KB passes, 70 KB
      // resets the stream) applies, a tighter one.
      maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      allowH2,
      connect: {
        timeout: options.connectTimeoutMs,
        ...(this.#secureContext ? { secureContext: this.#secureContext } : {}),
        // Checked again here, at connect time: a DNS answer that changed since the pre-check cannot slip through.
        ...(options.allowPrivateNetworks ? {} : { lookup: createGuardedLookup(this.#policy) }),
      },
    });
  }

  override fetch(req: HttpFetchRequest): Promise<FetchResult> {
    return super.fetch(req);
  }

  protected async fetchPrepared(req: PreparedRequest): Promise<FetchResult> {
    const phases = req.request as HttpFetchRequest;
    let url: URL = req.url;
    const callerHeaders = lowerCaseKeys(req.headers);
    let headers = { ...this.#defaultHeaders, ...callerHeaders };
    // The caller's own accept-encoding is sent as it is; the default one is Chrome's for each hop's scheme and host.
    const offered = callerHeaders['accept-encoding'] === undefined ? (this.#defaultHeaders['accept-encoding'] ?? null) : null;
    const proxyUrl = req.request.exit?.proxyUrl ?? null;
    const chain: string[] = [];
    // Cookies set along the redirect chain, per host, sent on its next hops as a browser does: a page that sets a
    // cookie and redirects to itself is not a loop. A hop is a loop when its URL and its cookies repeat.
    const chainJars = new Map<string, CookieJar>();
    let callerCookie: string | undefined = headers.cookie;
    const seen = new Set<string>([`${withoutHash(url)}\n${callerCookie ?? ''}`]);
    for (;;) {
      // Through a proxy the proxy resolves the name, so the connect-time lookup cannot guard it: every hop's name is
      // resolved here and refused if any answer is not public (a rebinding between this and the proxy's own lookup
      // is the residual risk of any forward proxy).
      await assertAllowedTarget(url, this.#policy, { resolve: proxyUrl !== null });
      if (offered !== null) headers = { ...headers, 'accept-encoding': acceptEncodingFor(url, offered) };
      const request = (h2: boolean) => {
        // Asked per hop: a pool closed for being the least recently used between two hops takes no new request.
        const agent = proxyUrl ? this.#proxyAgent(proxyUrl, req.request.exit?.tier ?? '', h2) : h2 ? (this.#h2Agent ??= this.#directAgent(true)) : this.#agent;
        return agent.request({
          origin: url.origin,
          path: url.pathname + url.search,
          method: 'GET',
          headers,
          signal: req.signal,
          headersTimeout: phases.headersTimeoutMs ?? this.options.headersTimeoutMs,
          bodyTimeout: phases.bodyTimeoutMs ?? this.options.bodyTimeoutMs,
        });
      };
      const h2Only = this.#h2Only.has(url.origin);
      if (h2Only) this.#h2Only.set(url.origin, true);
      const res = await request(h2Only).catch((err: unknown) => {
        // The server offered only h2 in ALPN (the TLS handshake failed, so nothing was asked of it yet): the same
        // request once more over HTTP/2, and the origin's next requests go there directly.
        if (h2Only || req.signal.aborted || !refusedHttp1(err)) throw err;
        this.#h2Only.set(url.origin, true);
        return request(true);
      }).catch((err: unknown) => {
        const why = req.signal.aborted ? null : refusedHead(err);
        // The same bytes come next time, and a browser reads them: the site's pages are for a browser to fetch.
        if (why) throw new FetchError('wrong_tool', `plain HTTP cannot parse the response, a browser can: ${why}`, { url: req.originalUrl, fetcher: this.name, cause: err });
        throw err;
      });
      const headersMs = Date.now() - req.startedAt;
      const location = firstHeader(res.headers.location);
      if (REDIRECT_STATUSES.has(res.statusCode) && location) {
        await res.body.dump().catch(() => undefined);
        const next = resolveLocation(location, url, this.name);
        chain.push(url.href);
        const setCookie = res.headers['set-cookie'];
        if (setCookie) chainJars.set(url.hostname, applySetCookie(chainJars.get(url.hostname) ?? {}, [setCookie].flat().join('\n'), Date.now(), url.protocol === 'https:'));
        if (next.origin !== url.origin) {
          headers = dropKeys(headers, ORIGIN_BOUND_HEADERS);
          callerCookie = undefined;
        }
        const cookie = [callerCookie, cookieHeaderOf(chainJars.get(next.hostname) ?? {}, Date.now(), next.protocol === 'https:')].filter(Boolean).join('; ');
        headers = cookie ? { ...headers, cookie } : dropKeys(headers, ['cookie']);
        const hop = `${withoutHash(next)}\n${cookie}`;
        if (seen.has(hop)) {
          throw new FetchError('redirect_loop', `redirect loop at ${next.href}`, { url: req.originalUrl, fetcher: this.name });
        }
        if (chain.length > this.options.maxRedirects) {
          throw new FetchError('too_many_redirects', `more than ${this.options.maxRedirects} redirects`, {
            url: req.originalUrl,
            fetcher: this.name,
          });
        }
        seen.add(hop);
        // 301/302/303 turn into GET per browsers; we only ever send GET, so there is no body to drop.
        url = next;
        continue;
      }
      const flatHeaders = flattenHeaders(res.headers);
      const ctx = { url: req.originalUrl, fetcher: this.name };
      // A 204 or 304 has no body whatever its Content-Length says (browsers ignore it); undici fails such a response's
      // body for not matching the length, and the same answer each time was retried and then lost as a network_error.
      let body = NO_BODY_STATUSES.has(res.statusCode)
        ? await res.body.dump().then(
            () => new Uint8Array(0),
            () => new Uint8Array(0),
          )
        : await readBody(res.body, flatHeaders, req.maxBytes, ctx, req.request.truncate === true);
      const contentType = mimeTypeOf(flatHeaders['content-type']);
      try {
        body = inflateStrayGzip(body, contentType, req.maxBytes) ?? body;
      } catch (err) {
        throw new FetchError('too_large', `gzip inside the body ${(err as Error).message}`, ctx);
      }
      const charset = isTextualType(contentType, body) ? sniffCharset(body, flatHeaders['content-type']) : undefined;
      // Decoded when first read: a 40 KB page is 40 KB of young heap that outlives a scavenge or two on the event
      // loop, where the analysis thread decodes the bytes itself (see FetchResult.charset).
      let text: string | null | undefined = charset === undefined ? null : undefined;
      return {
        fetcher: this.name,
        url: req.originalUrl,
        finalUrl: url.href,
        status: res.statusCode,
        headers: flatHeaders,
        body,
        contentType,
        get text(): string | null {
          if (text === undefined) text = decodeText(body, charset!);
          return text;
        },
        ...(charset === undefined ? {} : { charset }),
        redirectChain: chain,
        timings: { startedAt: req.startedAt, headersMs, totalMs: Date.now() - req.startedAt },
        ...(req.request.exit ? { exitTier: req.request.exit.tier } : {}),
      };
    }
  }

  #proxyAgent(proxyUrl: string, tier: string, allowH2: boolean): Agent {
    // A proxy's HTTP/2 pool is one more pool of the same proxy, counted against the same limit.
    const key = allowH2 ? `h2 ${proxyUrl}` : proxyUrl;
    let agent = this.#proxyAgents.get(key);
    if (agent) {
      // Most recently used last: the first one is the one to close when there are too many.
      this.#proxyAgents.delete(key);
      this.#proxyAgents.set(key, agent);
    } else {
      agent = new Agent({
        connections: this.options.connectionsPerOrigin,
        keepAliveTimeout: 10_000,
        maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
        headersTimeout: this.options.headersTimeoutMs,
        bodyTimeout: this.options.bodyTimeoutMs,
        allowH2,
        connect: createProxyConnector(proxyUrl, { timeoutMs: this.options.connectTimeoutMs, stalls: this.#stalls, tier, secureContext: this.#secureContext, allowH2 }) as never,
      });
      this.#proxyAgents.set(key, agent);
      if (this.#proxyAgents.size > PROXY_POOLS_KEPT) {
        const [oldest, pool] = this.#proxyAgents.entries().next().value as [string, Agent];
        this.#proxyAgents.delete(oldest);
        // close() lets the requests under way finish; the URL's next request makes a new pool.
        void pool.close().catch(() => pool.destroy());
      }
    }
    return agent;
  }

  protected override translateError(err: unknown, req: PreparedRequest): FetchError {
    for (let e: unknown = err, n = 0; e && n < 8; e = (e as { cause?: unknown }).cause, n++) {
      if (e instanceof ProxyExitError) return new FetchError('proxy_unavailable', e.message, { url: req.originalUrl, fetcher: this.name, cause: e });
    }
    if (err instanceof BodyCutOff) {
      // The headers came and the body did not finish: the same code as the error alone, with how far the body got,
      // which is what tells a server that cuts its responses short from one that never answered.
      const inner = this.translateError(err.cause, req);
      return new FetchError(inner.code, `${inner.message} (${err.describe()})`, { url: req.originalUrl, fetcher: this.name, cause: err.cause });
    }
    return translateUndiciError(err, { url: req.originalUrl, fetcher: this.name, signal: req.signal }) ?? super.translateError(err, req);
  }

  /** Keep-alive pools open for proxy URLs. */
  get proxyPools(): number {
    return this.#proxyAgents.size;
  }

  close(): Promise<void> {
    this.#closed ??= Promise.all(
      [this.#agent, ...(this.#h2Agent ? [this.#h2Agent] : []), ...this.#proxyAgents.values()].map((a) => a.close().catch(() => a.destroy())),
    ).then(() => undefined);
    return this.#closed;
  }
}

/** Create the simple_http fetcher. */
export function createHttpFetcher(opts: FetchersOptions = {}): HttpFetcher {
  return new HttpFetcher(resolveFetchersOptions(opts));
}

/** Reading a response's body failed after its headers came: the error, and how many body bytes had arrived. */
class BodyCutOff extends Error {
  override name = 'BodyCutOff';
  constructor(
    readonly received: number,
    readonly declared: number | null,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }

  describe(): string {
    return this.declared !== null ? `${this.received} of ${this.declared} body bytes received` : `${this.received} body bytes received`;
  }
}

// Past 1 MiB decoded, a body may not inflate more than this many times its compressed size: HTML compresses 5-20x,
// a bomb thousands of times. It is cut early instead of at maxBytes.
const MAX_COMPRESSION_RATIO = 200;
const RATIO_CHECK_AFTER_BYTES = 1024 * 1024;
const TRUNCATE_READ_AHEAD_BYTES = 2 * 1024 * 1024;

/**
 * Read a body, decompressing by hand and counting bytes AFTER decompression, so a 50 KB gzip bomb that
 * inflates to gigabytes is cut at `maxBytes` instead of filling memory. The compressed bytes count too (a stream
 * of empty gzip members decodes to nothing, for ever) and so does the ratio between the two. `truncate`: a body past
 * `maxBytes` is its first `maxBytes` instead (the compressed-size and ratio guards still fail it).
 */
async function readBody(
  raw: Readable,
  headers: Record<string, string>,
  maxBytes: number,
  ctx: { url: string; fetcher: string },
  truncate = false,
): Promise<Uint8Array> {
  const encoding = headers['content-encoding'];
  const declared = Number(headers['content-length']);
  const tooLarge = () => new FetchError('too_large', `body exceeds ${maxBytes} bytes`, ctx);
  if (!truncate && !encoding && Number.isFinite(declared) && declared > maxBytes) {
    raw.destroy();
    throw tooLarge();
  }
  const declaredOrNull = Number.isFinite(declared) && headers['content-length'] !== undefined ? declared : null;
  const cutOff = (received: number, err: unknown) => (err instanceof FetchError ? err : new BodyCutOff(received, declaredOrNull, err));
  const iterator = raw[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await iterator.next().catch((err: unknown) => {
    throw cutOff(0, err);
  });
  // HTTP/1.1 responses shorter than their Content-Length fail in undici's parser; its HTTP/2 client ends the body when
  // the stream ends, and the first stream of a session reset mid-body ended as if complete: half a page, stored.
  const endedShort = (received: number) => declaredOrNull !== null && received < declaredOrNull;
  const shortBody = (received: number) => new BodyCutOff(received, declaredOrNull, new Error('the response ended before its Content-Length'));
  if (first.done) {
    if (endedShort(0)) throw shortBody(0);
    return new Uint8Array(0);
  }
  const unknown = unknownCodings(encoding);
  if (unknown.length > 0 && looksEncoded(first.value, isTextualType(mimeTypeOf(headers['content-type']), first.value))) {
    // Stored as it came, a compress (.Z) body would be kept and analysed as the page: binary noise.
    raw.destroy();
    throw new FetchError('decode_error', `cannot decode content-encoding ${unknown.join(', ')}`, ctx);
  }
  // A body with neither Content-Length nor chunks ends when the connection does, so a server that closes mid-stream
  // looks like one that finished: only the compressed stream's own end marker tells them apart.
  const closeDelimited = headers['content-length'] === undefined && !/chunked/i.test(headers['transfer-encoding'] ?? '');
  const decoder = createDecoder(encoding, first.value[0], closeDelimited);
  if (!decoder) {
    // Identity (most bodies): read the socket's chunks as they come, with no stream re-wrapping.
    const chunks: Buffer[] = [first.value];
    let total = first.value.length;
    try {
      while (total <= maxBytes) {
        const n = await iterator.next().catch((err: unknown) => {
          throw cutOff(total, err);
        });
        if (n.done) {
          if (endedShort(total)) throw shortBody(total);
          break;
        }
        total += n.value.length;
        chunks.push(n.value);
      }
      if (total > maxBytes && !truncate) throw tooLarge();
    } finally {
      raw.destroy();
    }
    return joinChunks(chunks, Math.min(total, maxBytes));
  }
  let rawTotal = 0;
  let rawEnded = false;
  // The compressed bytes read ahead of the decoder (up to 16 socket chunks) may pass maxBytes before the decoded ones
  // do: a body being truncated gets that much more room.
  const rawLimit = truncate ? maxBytes + TRUNCATE_READ_AHEAD_BYTES : maxBytes;
  const replay = Readable.from(
    (async function* () {
      rawTotal += first.value.length;
      yield first.value;
      for (let n = await iterator.next(); !n.done; n = await iterator.next()) {
        rawTotal += n.value.length;
        if (rawTotal > rawLimit) throw new FetchError('too_large', `compressed body exceeds ${rawLimit} bytes`, ctx);
        yield n.value;
      }
      rawEnded = true;
    })(),
  );
  let source: Readable = replay;
  if (decoder) {
    replay.on('error', (e) => decoder.destroy(e));
    source = replay.pipe(decoder);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let cut = false;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes && truncate) {
        chunks.push(chunk);
        cut = true;
        break;
      }
      if (total > maxBytes) throw tooLarge();
      if (total > RATIO_CHECK_AFTER_BYTES && total > rawTotal * MAX_COMPRESSION_RATIO) {
        throw new FetchError('too_large', `body inflates more than ${MAX_COMPRESSION_RATIO} times its compressed size`, ctx);
      }
      chunks.push(chunk);
    }
    if (!cut && endedShort(rawTotal)) throw shortBody(rawTotal);
  } catch (err) {
    if (err instanceof FetchError || err instanceof BodyCutOff) throw err;
    // The compressed stream stopped early because its bytes did: a cut body, not a corrupt one.
    if (rawEnded && endedShort(rawTotal)) throw shortBody(rawTotal);
    const failure = decodingFailure(err);
    if (closeDelimited && failure === 'truncated') {
      // Half a page stored as the page would pass validation and replace a whole one: a cut connection, to retry.
      throw new FetchError('network_error', `the connection closed before the end of the ${encoding} stream (${rawTotal} body bytes received)`, { ...ctx, cause: err });
    }
    if (failure === 'too_costly') throw new FetchError('too_large', `${encoding} body costs too much to decode: ${(err as Error).message}`, { ...ctx, cause: err });
    if (failure !== null) throw new FetchError('decode_error', `cannot decompress ${encoding} body: ${(err as Error).message}`, { ...ctx, cause: err });
    // Content-Length counts the bytes on the wire: the compressed ones.
    throw cutOff(rawTotal, err);
  } finally {
    source.destroy();
    replay.destroy();
    raw.destroy();
  }
  return joinChunks(chunks, Math.min(total, maxBytes));
}

/**
 * The chunks as one plain Uint8Array over the joined Buffer's memory: `new Uint8Array(buffer)` would copy it, a third
 * copy of the body (chunks, joined, copied) alive until the next GC.
 */
function joinChunks(chunks: Buffer[], length: number): Uint8Array {
  const joined = Buffer.concat(chunks, length);
  return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
}

/**
 * undici hands header values over as Latin-1, one character per byte, so a Location sent as raw UTF-8 (`/café`, as
 * many servers send non-ASCII paths) would be percent-encoded as mojibake (`/caf%C3%83%C2%A9`). Browsers read its bytes
 * as UTF-8; bytes that are no UTF-8 are kept as they came, percent-encoded.
 */
function locationFromBytes(latin1: string): string {
  if (!/[\x80-\xff]/.test(latin1)) return latin1;
  const bytes = Buffer.from(latin1, 'latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return latin1.replace(/[\x80-\xff]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  }
}

function resolveLocation(rawLocation: string, base: URL, fetcher: string): URL {
  const location = locationFromBytes(rawLocation);
  let next: URL;
  try {
    next = new URL(location, base);
  } catch (cause) {
    throw new FetchError('invalid_url', `bad redirect location ${location.slice(0, 200)}`, { url: base.href, fetcher, cause });
  }
  return parseFetchUrl(next.href, fetcher);
}

function withoutHash(url: URL): string {
  return url.href.split('#')[0] ?? url.href;
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function flattenHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    const key = k.toLowerCase();
    if (key === 'content-type' && Array.isArray(v)) out[key] = lastContentType(v);
    else out[key] = Array.isArray(v) ? v.join(key === 'set-cookie' ? '\n' : ', ') : String(v);
  }
  return out;
}

/**
 * A Content-Type sent more than once (a framework's and a proxy's), as Fetch's "extract a MIME type" reads it: the
 * last one counts, with the charset an earlier one of the same type gave when it names none. Joined with commas it
 * was read as the type `text/html, text/html`, which nothing takes for HTML.
 */
function lastContentType(values: string[]): string {
  const last = values.at(-1) ?? '';
  const essence = (v: string) => v.split(';')[0]!.trim().toLowerCase();
  if (/;\s*charset\s*=/i.test(last)) return last;
  const withCharset = values.findLast((v) => essence(v) === essence(last) && /;\s*charset\s*=/i.test(v));
  const charset = withCharset?.match(/;\s*(charset\s*=\s*("[^"]*"|[^;\s]+))/i)?.[1];
  return charset ? `${last.trim()}; ${charset}` : last;
}

function lowerCaseKeys(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

function dropKeys(h: Record<string, string>, keys: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([k]) => !keys.includes(k)));
}
