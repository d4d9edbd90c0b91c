/** Bytes analysed per response: enough for any real page's markers, bounded so a 50 MB dump stays fast. */
export const MAX_ANALYSED_BYTES = 2 * 1024 * 1024;

/** The charset parameter of a Content-Type, lower-case, or null. */
export function charsetOf(contentType: string | undefined): string | null {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return m?.[1] ? m[1].toLowerCase() : null;
}

/**
 * Text of a body for analysis, at most MAX_ANALYSED_BYTES of it. Charset precedence follows the HTML spec's
 * encoding sniffing: a BOM, then the Content-Type charset, then what the document declares itself
 * ({@link declaredCharset}), then {@link undeclaredCharset}. Node 20 ships full ICU, so TextDecoder handles legacy encodings (Shift_JIS, windows-1251…);
 * an unknown label falls back to UTF-8 rather than throwing.
 */
export function decodeBody(body: string | Uint8Array, contentType: string | undefined, maxBytes = MAX_ANALYSED_BYTES): string {
  if (typeof body === 'string') return body.length > maxBytes ? body.slice(0, maxBytes) : body;
  const bytes = body.length > maxBytes ? body.subarray(0, maxBytes) : body;
  const bom = bomEncoding(bytes);
  return decodeWith(bodyCharset(bytes, contentType), bom ? bytes.subarray(bom.length) : bytes);
}

/**
 * The charset of a body that declares none (no BOM, no usable header charset, no `<meta>` or XML declaration):
 * UTF-8 when its bytes are UTF-8, else windows-1252, the HTML standard's default for most locales and what browsers
 * read such a page as. A body cut inside a character (a prefix) still reads as UTF-8. JSON is UTF-8 by definition.
 */
export function undeclaredCharset(body: Uint8Array, contentType: string | null | undefined): 'utf-8' | 'windows-1252' {
  const mime = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mime === 'application/json' || mime.endsWith('+json')) return 'utf-8';
  try {
    // stream: an incomplete sequence at the end is the cut, not an error (a decoder of its own, never flushed).
    new TextDecoder('utf-8', { fatal: true }).decode(body, { stream: true });
    return 'utf-8';
  } catch {
    return 'windows-1252';
  }
}

/**
 * The charset a body's text is read in, as {@link decodeBody} reads it: a BOM, then the Content-Type charset, then
 * what the document declares itself, then {@link undeclaredCharset} (UTF-8 when the bytes are UTF-8, else windows-1252).
 */
export function bodyCharset(body: Uint8Array, contentType: string | null | undefined): string {
  return bomEncoding(body)?.encoding ?? knownCharset(charsetOf(contentType ?? undefined)) ?? declaredCharset(body, contentType) ?? undeclaredCharset(body, contentType);
}

/**
 * `label` when it names an encoding this platform decodes, else null. The Encoding Standard makes an unknown label
 * (`charset=bogus`, `charset=utf8mb4`) no answer at all, so the next source (a `<meta charset>`) decides, as in browsers.
 */
export function knownCharset(label: string | null | undefined): string | null {
  if (!label) return null;
  if (WINDOWS_1252_LABELS.has(label)) return label;
  try {
    new TextDecoder(label);
    return label;
  } catch {
    return null;
  }
}

function bomEncoding(b: Uint8Array): { encoding: string; length: number } | null {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (b[0] === 0xff && b[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (b[0] === 0xfe && b[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return null;
}

const PRESCAN_BYTES = 1024;
const HEAD_SCAN_BYTES = 64 * 1024;
// [^<>] rather than [^>]: a head full of unclosed `<meta` is scanned once, not once per `<meta`.
const META_CHARSET = /<meta[^<>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.+-]+)/i;
const XML_DECLARATION_ENCODING = /^<\?xml[^>]*?\sencoding\s*=\s*["']([a-zA-Z0-9_:.+-]+)["']/;

/**
 * The charset a document names in its own markup, or null: for an XML type (or an untyped body) an XML declaration's
 * `encoding`; else a `<meta charset>` or `<meta http-equiv="Content-Type" content="…; charset=x">` in the first KiB
 * (the HTML standard's prescan) or, past it, anywhere before `<body>` in the first 64 KiB: browsers read on while
 * in `<head>`, and pages with a long inline script or style ahead of their `<meta>` are common.
 */
export function declaredCharset(b: Uint8Array, contentType: string | null | undefined): string | null {
  const mime = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mime === '' || mime === 'text/xml' || mime === 'application/xml' || mime.endsWith('+xml')) {
    const xml = XML_DECLARATION_ENCODING.exec(latin1(b.subarray(0, 256)))?.[1]?.toLowerCase();
    if (xml && knownCharset(metaCharsetLabel(xml))) return metaCharsetLabel(xml);
  }
  let m = META_CHARSET.exec(latin1(b.subarray(0, PRESCAN_BYTES)));
  if (!m && b.length > PRESCAN_BYTES) {
    const head = latin1(b.subarray(0, HEAD_SCAN_BYTES));
    const bodyAt = head.search(/<body[\s>\/]/i);
    m = META_CHARSET.exec(bodyAt >= 0 ? head.slice(0, bodyAt) : head);
  }
  const label = m?.[1]?.toLowerCase();
  return label ? metaCharsetLabel(label) : null;
}

/**
 * The charset a `<meta>` label means, as the HTML standard's prescan reads it: bytes that an ASCII `<meta>` could be
 * read from are not UTF-16, so a label naming UTF-16 means UTF-8 (and x-user-defined means windows-1252).
 */
export function metaCharsetLabel(label: string): string {
  if (/^(utf-16|utf-16le|utf-16be|unicode|ucs-2|unicodefeff|unicodefffe|iso-10646-ucs-2|csunicode)$/.test(label)) return 'utf-8';
  return label === 'x-user-defined' ? 'windows-1252' : label;
}

function latin1(b: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < b.length; i += 8192) parts.push(String.fromCharCode(...b.subarray(i, i + 8192)));
  return parts.join('');
}

/** Labels the Encoding Standard maps to windows-1252 (HTML treats "latin1" and "ascii" as windows-1252). */
const WINDOWS_1252_LABELS = new Set(['windows-1252', 'cp1252', 'x-cp1252', 'latin1', 'iso-8859-1', 'iso8859-1', 'iso_8859-1', 'l1', 'ascii', 'us-ascii', 'ansi_x3.4-1968', 'cp819', 'ibm819', 'iso-ir-100']);
/** windows-1252 code points for bytes 0x80–0x9F (the rest equal their byte value). */
const CP1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008DŽ\u008F\u0090‘’“”•–—˜™š›œ\u009DžŸ';

/** Whether the Encoding Standard reads `label` as windows-1252 (`iso-8859-1`, `us-ascii`, `latin1`… included). */
export function isWindows1252Label(label: string): boolean {
  return WINDOWS_1252_LABELS.has(label.trim().toLowerCase());
}

/** Node 20's TextDecoder decodes windows-1252 as ISO-8859-1 (0x80 → U+0080, not €), so we map it ourselves. */
export function decodeWindows1252(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let start = 0; start < bytes.length; start += 8192) {
    const chunk = bytes.subarray(start, start + 8192);
    let s = '';
    for (const b of chunk) s += b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] : String.fromCharCode(b);
    parts.push(s);
  }
  return parts.join('');
}

function decodeWith(label: string, bytes: Uint8Array): string {
  if (WINDOWS_1252_LABELS.has(label)) return decodeWindows1252(bytes);
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(bytes);
}
