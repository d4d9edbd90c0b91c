import { looksLikeFeed } from '../crawl/extract-feed-links.js';

/** Content families the router reasons about. Only `html` can be a shell, a challenge or "empty". */
export type ContentFamily = 'html' | 'pdf' | 'image' | 'video' | 'audio' | 'json' | 'xml' | 'text' | 'binary';

/** MIME type prefixes/patterns to families, most specific first. Data, not code paths. */
const MIME_FAMILIES: readonly [RegExp, ContentFamily][] = [
  [/^(text\/html|application\/xhtml\+xml)$/, 'html'],
  [/^application\/(x-)?pdf$/, 'pdf'],
  [/^image\//, 'image'],
  [/^video\/|^application\/(x-mpegurl|vnd\.apple\.mpegurl|dash\+xml)$/, 'video'],
  [/^audio\//, 'audio'],
  [/^application\/([\w.-]+\+)?json$|^text\/json$/, 'json'],
  [/^(application|text)\/([\w.-]+\+)?xml$/, 'xml'],
  [/^text\//, 'text'],
  [/^application\/(javascript|ecmascript|x-javascript)$/, 'text'],
];

/** The lower-case MIME type of a Content-Type without parameters. */
export function mimeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * The family of a response: from its Content-Type when that is specific, otherwise sniffed from the first bytes
 * (servers often send application/octet-stream or nothing for PDFs and images). A textual type is overruled by a
 * file signature no text starts with: a PDF served as text/html is a PDF, not an empty page; so is a feed.
 */
export function detectContentFamily(contentType: string | undefined, head: Uint8Array | string): ContentFamily {
  const mime = mimeOf(contentType);
  if (mime !== '' && mime !== 'application/octet-stream' && mime !== 'binary/octet-stream') {
    for (const [re, fam] of MIME_FAMILIES) {
      if (!re.test(mime)) continue;
      if (fam !== 'html' && fam !== 'text') return fam;
      // A feed written by a script that never set its Content-Type goes out as text/html: it is XML, not an empty page.
      return signatureFamily(headText(head, 16)) ?? (fam === 'html' && looksLikeFeed(headText(head, 512)) ? 'xml' : fam);
    }
    return 'binary';
  }
  return sniffFamily(head);
}

/** The first `n` characters of a body, bytes as Latin-1, for signature tests. */
function headText(head: Uint8Array | string, n: number): string {
  return typeof head === 'string' ? head.slice(0, n) : String.fromCharCode(...head.subarray(0, n));
}

/** The family of a body that opens with an unmistakable binary file signature (none that text could start with). */
function signatureFamily(text: string): ContentFamily | null {
  if (text.startsWith('%PDF-')) return 'pdf';
  if (/^\x89PNG\r\n|^\xFF\xD8\xFF|^GIF8[79]a|^RIFF....WEBP/s.test(text)) return 'image';
  if (/^....ftyp(isom|mp4|M4V|avc1|dash|qt)/s.test(text) || text.startsWith('\x1A\x45\xDF\xA3')) return 'video';
  return null;
}

function sniffFamily(head: Uint8Array | string): ContentFamily {
  const bytes = typeof head === 'string' ? null : head.subarray(0, 512);
  const text = headText(head, 512);
  const start = text.replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart();
  if (start.startsWith('%PDF-')) return 'pdf';
  const signed = signatureFamily(text);
  if (signed) return signed;
  // Weaker signatures, believed only when no specific type was declared.
  if (/^\x89PNG|^BM/.test(text)) return 'image';
  if (/^ID3|^OggS|^fLaC|^\xFF\xFB/.test(text) || /^....ftypM4A/s.test(text)) return 'audio';
  if (/^<!doctype html|^<html|^<head|^<body|^<!--[\s\S]*?-->\s*<(!doctype html|html)/i.test(start)) return 'html';
  if (/^<\?xml|^<(rss|feed|urlset|sitemapindex)\b/i.test(start)) return /<html/i.test(start) ? 'html' : 'xml';
  if (/^[{[]/.test(start)) return 'json';
  if (bytes && bytes.includes(0)) return 'binary';
  if (start === '') return 'text';
  return /<(div|p|title|script|meta)\b/i.test(start) ? 'html' : 'text';
}
