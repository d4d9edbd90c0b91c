import { createGzip } from 'node:zlib';
import type { Route, RouteHandler, Routes } from './server.js';
import { sleep } from './server.js';
import { staticArticle } from './pages.js';

/** Serve HTML with status 200 (or another status). */
export function html(body: string, status = 200, headers: Record<string, string> = {}): Route {
  return { status, body, headers: { 'content-type': 'text/html; charset=utf-8', ...headers } };
}

/** Headers arrive only after `delayMs`: exercises a client's headers timeout. */
export function slowHeaders(delayMs: number, body = staticArticle()): RouteHandler {
  return async (_req, res) => {
    await sleep(delayMs);
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  };
}

export interface TrickleOptions {
  /** Number of chunks to send. @defaultValue 20 */
  chunks?: number;
  /** Pause between chunks. @defaultValue 500 */
  intervalMs?: number;
  /** Bytes per chunk. @defaultValue 64 */
  chunkBytes?: number;
}

/** Headers at once, then the body a little at a time: exercises body/overall timeouts. */
export function slowBody(opts: TrickleOptions = {}): RouteHandler {
  const chunks = opts.chunks ?? 20;
  const intervalMs = opts.intervalMs ?? 500;
  const chunk = 'x'.repeat(opts.chunkBytes ?? 64);
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.write('<!doctype html><html><body><p>');
    for (let i = 0; i < chunks && !res.destroyed; i++) {
      await sleep(intervalMs);
      if (!res.destroyed) res.write(chunk);
    }
    if (!res.destroyed) res.end('</p></body></html>');
  };
}

export interface EndlessOptions {
  /** Bytes per write. @defaultValue 65536 */
  chunkBytes?: number;
  /** Extra headers (for example a lying `content-length` is NOT sent: the body is chunked). */
  headers?: Record<string, string>;
}

/** A body that never ends, written as fast as the client reads: a max-bytes limit must cut it. */
export function endlessBody(opts: EndlessOptions = {}): RouteHandler {
  const chunk = Buffer.alloc(opts.chunkBytes ?? 65_536, 'a');
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...opts.headers });
    res.write('<!doctype html><html><body><p>');
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) {
        /* keep writing until the socket buffer is full */
      }
      if (!res.destroyed) res.once('drain', pump);
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  };
}

const bombCache = new Map<number, Promise<Buffer>>();

/** Gzip `inflatedBytes` of spaces inside an HTML prefix, streaming so the huge plain text never sits in memory. */
function buildBomb(inflatedBytes: number): Promise<Buffer> {
  let cached = bombCache.get(inflatedBytes);
  if (!cached) {
    cached = new Promise<Buffer>((resolve, reject) => {
      const gz = createGzip({ level: 9 });
      const out: Buffer[] = [];
      gz.on('data', (b: Buffer) => out.push(b));
      gz.on('end', () => resolve(Buffer.concat(out)));
      gz.on('error', reject);
      const block = Buffer.alloc(1 << 20, ' ');
      gz.write('<!doctype html><html><body>');
      let left = inflatedBytes;
      const step = () => {
        while (left > 0) {
          const n = Math.min(left, block.length);
          left -= n;
          if (!gz.write(n === block.length ? block : block.subarray(0, n))) {
            gz.once('drain', step);
            return;
          }
        }
        gz.end('</body></html>');
      };
      step();
    });
    bombCache.set(inflatedBytes, cached);
  }
  return cached;
}

/**
 * A gzip bomb: about 50 KB on the wire that inflates to `inflatedBytes` (default 50 MiB), sent with
 * `content-encoding: gzip`. A client that counts the limit after decompression cuts it off.
 */
export function gzipBomb(inflatedBytes = 50 * 1024 * 1024): RouteHandler {
  return async (_req, res) => {
    const body = await buildBomb(inflatedBytes);
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-encoding': 'gzip',
      'content-length': String(body.length),
    });
    res.end(body);
  };
}

/** Redirect to `location` (a path or an absolute URL, possibly on another host). */
export function redirect(location: string, status = 302): Route {
  return { status, headers: { location }, body: '' };
}

/**
 * Routes for a chain `${prefix}/1 → ${prefix}/2 → … → ${prefix}/n → finalPath`. Merge into your route map.
 * @param hops number of redirects before the final path
 */
export function redirectChain(prefix: string, hops: number, finalPath: string, status = 302): Routes {
  const routes: Routes = {};
  for (let i = 1; i <= hops; i++) routes[`${prefix}/${i}`] = redirect(i === hops ? finalPath : `${prefix}/${i + 1}`, status);
  return routes;
}

/** Routes for a loop `a → b → a`. */
export function redirectLoop(a: string, b: string): Routes {
  return { [a]: redirect(b), [b]: redirect(a) };
}

/** Single-byte encodings this kit can produce without extra dependencies. */
export type SingleByteCharset = 'windows-1251' | 'iso-8859-1' | 'windows-1252' | 'koi8-r';

const encoders = new Map<string, Map<string, number>>();

/** Encode text in a single-byte charset by inverting the platform's decoder table. Unmappable → '?'. */
export function encodeSingleByte(text: string, charset: SingleByteCharset): Uint8Array {
  let table = encoders.get(charset);
  if (!table) {
    table = new Map();
    const dec = new TextDecoder(charset);
    for (let b = 0; b < 256; b++) {
      const ch = dec.decode(new Uint8Array([b]));
      if (!table.has(ch)) table.set(ch, b);
    }
    encoders.set(charset, table);
  }
  const out = new Uint8Array(text.length);
  let i = 0;
  for (const ch of text) out[i++] = table.get(ch) ?? 0x3f;
  return out.subarray(0, i);
}

/** Russian and French sample texts: each decodes wrongly as UTF-8, so a test can tell. */
export const SAMPLE_TEXTS = {
  russian: 'Привет, мир! Съешь же ещё этих мягких французских булок, да выпей чаю.',
  french: "Voilà l'été: déjà ça, où êtes-vous? Noël à la française, crème brûlée.",
} as const;

/**
 * A page encoded in a non-UTF-8 charset, declared either in the `content-type` header or only by a `<meta>`.
 * The body text is `text`; the title is `title`.
 */
export function encodedPage(opts: { charset: SingleByteCharset; via: 'header' | 'meta'; text: string; title?: string }): Route {
  const meta = opts.via === 'meta' ? `<meta charset="${opts.charset}">` : '';
  const title = opts.title ?? opts.text.slice(0, 20);
  const page = `<!doctype html><html><head>${meta}<title>${title}</title></head><body><p>${opts.text}</p></body></html>`;
  const contentType = opts.via === 'header' ? `text/html; charset=${opts.charset}` : 'text/html';
  return { status: 200, headers: { 'content-type': contentType }, body: encodeSingleByte(page, opts.charset) };
}

/** A 403 with an ordinary "forbidden" page (no vendor markers). */
export function forbidden(body = '<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1></body></html>'): Route {
  return { status: 403, headers: { 'content-type': 'text/html' }, body };
}

/** A 429 with `Retry-After` in seconds (or an HTTP date string). */
export function tooManyRequests(retryAfter: number | string = 120): Route {
  return {
    status: 429,
    headers: { 'content-type': 'text/html', 'retry-after': String(retryAfter) },
    body: '<html><head><title>429 Too Many Requests</title></head><body><h1>Too Many Requests</h1></body></html>',
  };
}

/** Any status with a small body (5xx tests). */
export function status(code: number, body = `<html><body><h1>${code}</h1></body></html>`): Route {
  return { status: code, headers: { 'content-type': 'text/html' }, body };
}

/** Destroy the socket without a response: the client sees ECONNRESET / "other side closed". */
export function connectionReset(): RouteHandler {
  return (req) => {
    req.socket.destroy();
  };
}

/** Send headers and part of the body, then destroy the socket mid-body. */
export function resetMidBody(bytesBeforeReset = 1024): RouteHandler {
  return (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(bytesBeforeReset * 10) });
    res.write(Buffer.alloc(bytesBeforeReset, 'a'), () => setTimeout(() => req.socket.destroy(), 20));
  };
}

/** `robots.txt` with the given text. @defaultValue allows everything */
export function robotsTxt(text = 'User-agent: *\nDisallow:\n'): Route {
  return { status: 200, headers: { 'content-type': 'text/plain' }, body: text };
}

/** A PDF response from bytes (see `pdfBytes()`). */
export function pdf(bytes: Uint8Array): Route {
  return { status: 200, headers: { 'content-type': 'application/pdf' }, body: bytes };
}
