import iconv from 'iconv-lite';
import { isWindows1252Label } from '../validation/decode-body.js';

/** Labels whose documents' URLs are written in UTF-8: UTF-8 itself and, by the URL standard, UTF-16 and its aliases. */
const UTF8_QUERY = /^(unicode-1-1-utf-8|unicode11utf8|unicode20utf8|utf-?8|x-unicode20utf8|utf-16(le|be)?|unicodefeff|unicodefffe|csunicode|iso-10646-ucs-2|ucs-2|unicode)$/;

/** The iconv-lite name a document's charset label encodes with, or null when its URLs are UTF-8 (or nothing knows the label). */
function encoderName(charset: string | null | undefined): string | null {
  const label = charset?.trim().toLowerCase();
  if (!label || UTF8_QUERY.test(label)) return null;
  // latin1, iso-8859-1 and us-ascii are windows-1252 to a browser, for URLs as for text.
  if (isWindows1252Label(label)) return 'windows-1252';
  return iconv.encodingExists(label) ? label : null;
}

// The URL standard's query percent-encode set (C0 controls, space, ", #, <, >, and ' for http and https), and every byte past ASCII.
const isQueryEscaped = (b: number) => b <= 0x20 || b === 0x22 || b === 0x23 || b === 0x27 || b === 0x3c || b === 0x3e || b >= 0x7f;
const hex = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * `href` with the non-ASCII characters of its query percent-encoded in `charset`, the document's encoding, as a
 * browser's URL parser writes them (so `?q=Москва` in a windows-1251 page asks for `?q=%CC%EE…`, the page the site
 * serves, not `%D0%9C…` it may not understand); a character the encoding lacks becomes `%26%23N%3B` (`&#N;`). The
 * path and the fragment are left to the URL parser (always UTF-8), and so is everything when `charset` is UTF-8,
 * UTF-16 or unknown.
 */
export function encodeQueryIn(href: string, charset: string | null | undefined): string {
  const hash = href.indexOf('#');
  const q = href.indexOf('?');
  if (q === -1 || (hash !== -1 && hash < q)) return href;
  const end = hash === -1 ? href.length : hash;
  const query = href.slice(q + 1, end);
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(query)) return href;
  const name = encoderName(charset);
  if (name === null) return href;
  let out = '';
  for (const ch of query) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) {
      out += ch;
      continue;
    }
    const bytes = iconv.encode(ch, name);
    if (iconv.decode(bytes, name) !== ch) {
      out += `%26%23${cp}%3B`;
      continue;
    }
    for (const b of bytes) out += isQueryEscaped(b) ? hex(b) : String.fromCharCode(b);
  }
  return `${href.slice(0, q + 1)}${out}${href.slice(end)}`;
}
