import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw, gunzipSync, constants as zlibConstants } from 'node:zlib';
import { Duplex } from 'node:stream';
import iconv from 'iconv-lite';
import { declaredCharset, decodeWindows1252, detectContentFamily, isWindows1252Label, knownCharset, undeclaredCharset } from '@crawler/core';
import { createZstdDecoder, ZstdDecodeError } from './zstd-decoder.js';

/**
 * A decompressor for a `content-encoding`, or null for identity. Deflate is wrapped in zlib by the RFC but
 * sent raw by some servers, so the first byte decides (0x78 is the zlib header's usual first byte).
 * Unknown codings pass through untouched (the caller refuses a body that still looks encoded). A list (`gzip, gzip`,
 * `gzip, identity`) was applied in its order, so it is undone from the last; `identity` is no coding.
 * zstd is decoded in JavaScript (Node 20's zlib has none; see zstd-decoder.ts). `strict`: a stream that stops before
 * its end marker fails ({@link decodingFailure} says `truncated`) instead of giving what it decoded so far; for a body
 * whose end nothing else tells (no Content-Length, no chunks).
 */
export function createDecoder(contentEncoding: string | undefined, firstByte: number | undefined, strict = false): Duplex | null {
  const codings = (contentEncoding ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length <= 1) return decoderFor(codings[0] ?? '', firstByte, strict);
  // Only the outermost coding's first byte is known; an inner deflate is taken for the RFC's zlib-wrapped one.
  const decoders = codings.reverse().map((c, i) => decoderFor(c, i === 0 ? firstByte : 0x78, strict));
  if (decoders.some((d) => d === null)) return null;
  const [head, ...rest] = decoders as Duplex[];
  let tail: Duplex = head!;
  for (const d of rest) {
    tail.on('error', (e) => d.destroy(e));
    tail = tail.pipe(d);
  }
  return Duplex.from({ writable: head, readable: tail });
}

const KNOWN_CODINGS = new Set(['gzip', 'x-gzip', 'deflate', 'br', 'zstd']);

/** The codings of a `content-encoding` this fetcher cannot undo (`compress`, a typo), lower-case; usually none. */
export function unknownCodings(contentEncoding: string | undefined): string[] {
  return (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity' && !KNOWN_CODINGS.has(c));
}

// gzip, compress (.Z), zstd, xz, bzip2.
const COMPRESSED_MAGIC = [[0x1f, 0x8b], [0x1f, 0x9d], [0x28, 0xb5, 0x2f, 0xfd], [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], [0x42, 0x5a, 0x68]];

/**
 * Whether a body sent under a coding we cannot undo is still encoded. Browsers pass an unknown coding through (a
 * mislabel such as `Content-Encoding: utf-8` is common and harmless), so the body is kept when it reads as what it
 * claims: it does not start as a compressed format does and, when its type is text, has no control bytes.
 */
export function looksEncoded(head: Uint8Array, textual: boolean): boolean {
  if (COMPRESSED_MAGIC.some((m) => m.every((b, i) => head[i] === b))) return true;
  if (!textual) return false;
  // C0 controls other than tab, LF, FF, CR (and ESC, which ISO-2022 text uses) never appear in text.
  return head.subarray(0, 512).some((b) => b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d && b !== 0x1b);
}

/**
 * A text body that is still gzip once its content-encoding is undone, inflated: a server that gzipped twice under one
 * `gzip` label, or a `.html.gz` served as text/html without its Content-Encoding. Such bytes cannot be the text they
 * are typed as. Null when the body is not that; throws RangeError when it inflates past `maxBytes`.
 */
export function inflateStrayGzip(body: Uint8Array, mime: string | null, maxBytes: number): Uint8Array | null {
  // 08 (deflate) is the only method gzip defines: two magic bytes alone occur in binary noise.
  if (mime === null || body[0] !== 0x1f || body[1] !== 0x8b || body[2] !== 0x08 || !isTextualType(mime, body)) return null;
  try {
    return new Uint8Array(gunzipSync(body, { maxOutputLength: maxBytes, finishFlush: zlibConstants.Z_SYNC_FLUSH }));
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new RangeError(`inflates past ${maxBytes} bytes`);
    return null;
  }
}

function decoderFor(enc: string, firstByte: number | undefined, strict: boolean): Duplex | null {
  // Partial trailing data (a gzip trailer cut short) is common on the web in a body its framing says is whole;
  // undici and browsers accept it, so do we. Where only the stream's own end can say the body is whole, it must.
  const finish = strict ? {} : { finishFlush: zlibConstants.Z_SYNC_FLUSH };
  if (enc === 'gzip' || enc === 'x-gzip') return createGunzip(finish);
  if (enc === 'deflate') return ((firstByte ?? 0) & 0x0f) === 0x08 ? createInflate(finish) : createInflateRaw(finish);
  if (enc === 'br') return createBrotliDecompress(strict ? {} : { finishFlush: zlibConstants.BROTLI_OPERATION_FLUSH });
  if (enc === 'zstd') return createZstdDecoder(strict);
  return null;
}

/**
 * What a decoder from {@link createDecoder} failed of: `truncated`, a stream that stopped before its end marker
 * (strict mode); `too_costly`, a body that would cost far more to decode than it gives; `corrupt`, bytes that are not
 * the coding they are labelled; null for an error that did not come from decoding (the connection's).
 */
export function decodingFailure(err: unknown): 'truncated' | 'corrupt' | 'too_costly' | null {
  if (err instanceof ZstdDecodeError) return err.code === 'ZSTD_TRUNCATED' ? 'truncated' : err.code === 'ZSTD_TOO_COSTLY' ? 'too_costly' : 'corrupt';
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'Z_BUF_ERROR') return 'truncated';
  // zlib's codes are Z_*; brotli's are ERR__ERROR_* (BROTLI_DECODER_ERROR_* as Node names them).
  if (typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR__ERROR_'))) return 'corrupt';
  return null;
}

/** The MIME type of a `content-type` header without parameters, lower-case. */
export function mimeTypeOf(contentType: string | undefined): string | null {
  if (!contentType) return null;
  const mime = contentType.split(';')[0]?.trim().toLowerCase();
  return mime ? mime : null;
}

/** True for types whose body is text a crawler reads: HTML, XML, JSON, plain text, JavaScript, CSS. */
export function isTextualType(mime: string | null, body: Uint8Array): boolean {
  if (mime === null) return looksLikeMarkup(body);
  return (
    mime.startsWith('text/') ||
    mime === 'application/xhtml+xml' ||
    mime === 'application/xml' ||
    mime === 'application/json' ||
    mime === 'application/javascript' ||
    mime === 'application/ld+json' ||
    mime.endsWith('+xml') ||
    mime.endsWith('+json')
  );
}

/** An untyped body is read as text when it sniffs as HTML or XML as the validator sniffs it (a BOM, a leading comment). */
function looksLikeMarkup(body: Uint8Array): boolean {
  const family = detectContentFamily(undefined, body.subarray(0, 512));
  return family === 'html' || family === 'xml';
}

const CHARSET_IN_TYPE = /charset\s*=\s*["']?([\w.:-]+)/i;

/**
 * Which charset the body is in, by the HTML standard's order: a byte-order mark wins, then the header's
 * `charset` when it names one, then what the document declares itself (core's `declaredCharset`: a `<meta>` in
 * `<head>`, an XML declaration in XML), else UTF-8 when the bytes are UTF-8 and windows-1252 when not (core's
 * `undeclaredCharset`, as browsers read an undeclared page). The analysis and `crawl content` read the stored bytes by the same rule.
 */
export function sniffCharset(body: Uint8Array, contentType: string | undefined): string {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  // A label nothing decodes (`charset=bogus`) is no answer: the <meta> decides, as in browsers.
  const fromHeader = contentType?.match(CHARSET_IN_TYPE)?.[1]?.toLowerCase();
  if (fromHeader && (knownCharset(fromHeader) !== null || iconv.encodingExists(fromHeader))) return fromHeader;
  return declaredCharset(body, contentType) ?? undeclaredCharset(body, contentType);
}

/** Decode with the platform's WHATWG decoder (full ICU), falling back to iconv-lite, then UTF-8. */
export function decodeText(body: Uint8Array, charset: string): string {
  // Node 20's TextDecoder reads windows-1252 (and iso-8859-1, us-ascii: the same to a browser) as ISO-8859-1, so a
  // legacy page's curly quotes, dashes and euro signs came out as C1 control characters.
  if (isWindows1252Label(charset)) return decodeWindows1252(body);
  try {
    // TextDecoder strips the BOM itself.
    return new TextDecoder(charset).decode(body);
  } catch {
    if (iconv.encodingExists(charset)) return iconv.decode(Buffer.from(body), charset);
    return new TextDecoder('utf-8').decode(body);
  }
}
