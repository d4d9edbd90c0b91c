import { createHash, randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { gzipSync } from 'node:zlib';
import { decodeWindows1252 } from '@crawler/core';
import type { ExportedPage, ExportedRevisit } from '@crawler/db';

/** What the warcinfo record says about the export. */
export interface WarcInfo {
  /** Name of the WARC file, when written to one. */
  filename?: string;
  /** `software` field. @defaultValue 'fetch-router' */
  software?: string;
  /** Extra `key: value` fields (the export's filter, for example). */
  fields?: Record<string, string>;
}

const CRLF = '\r\n';

// Headers that described the bytes on the wire, not the stored body: pages are stored decoded and whole, so a reader
// that honoured them would try to gunzip plain bytes or de-chunk a body that has no chunks.
const WIRE_HEADERS = new Set(['content-encoding', 'transfer-encoding', 'content-length', 'connection', 'keep-alive']);

// windows-1252's characters for the octets 0x80–0x9F that it does not leave as C1 controls, from core's decoder.
const CP1252_OCTETS = new Map(
  [...decodeWindows1252(Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i))].map((c, i) => [c.codePointAt(0)!, 0x80 + i] as const).filter(([cp]) => cp > 0xff),
);

/**
 * An HTTP header block as the octets the server sent. Header values are opaque octets (RFC 9110 §5.5), stored as the
 * fetchers decoded them: plain HTTP one latin1 character per octet, the browsers (Chromium) as windows-1252, where
 * 0x80–0x9F become '€', '—', 'œ'…; both are undone here, so a UTF-8 file name in Content-Disposition comes out as
 * the UTF-8 it was. A character neither decoding makes (a value set by hand) is written as UTF-8.
 */
function headerOctets(text: string): Buffer {
  const out: number[] = [];
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    const octet = cp <= 0xff ? cp : CP1252_OCTETS.get(cp);
    if (octet !== undefined) out.push(octet);
    else out.push(...Buffer.from(char, 'utf8'));
  }
  return Buffer.from(out);
}

/** RFC 4648 base32 (upper case, padded), the encoding WARC digests conventionally use. */
export function base32(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

/** `sha256:<base32>` of bytes. */
export function warcDigest(bytes: Uint8Array | string): string {
  return `sha256:${base32(createHash('sha256').update(bytes).digest())}`;
}

/** `sha256:<base32>` from a stored hex sha256 (the payload digest without hashing the body again). */
export function warcDigestFromHex(hex: string): string {
  return `sha256:${base32(Buffer.from(hex, 'hex'))}`;
}

function warcDate(d: Date): string {
  // WARC 1.1 allows sub-second precision; milliseconds keep pages fetched in the same second apart.
  return d.toISOString();
}

function recordId(): string {
  return `<urn:uuid:${randomUUID()}>`;
}

/**
 * The record id of a stored version's response, the same in every export: a revisit record written in a later
 * (incremental) export points at the response an earlier one wrote. A UUID-shaped digest of the version's identity.
 */
export function responseRecordId(version: { contentId: bigint; sha256: string; fetchedAt: Date }): string {
  const h = createHash('sha256').update(`fetch-router:response:${version.contentId}:${version.sha256}:${version.fetchedAt.toISOString()}`).digest('hex');
  // Version 8 ("custom") UUID layout, RFC 9562: the digest's bits with the version and variant bits set.
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `<urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}>`;
}

/** WARC 1.1 revisit profiles, as Heritrix writes them. */
export const REVISIT_PROFILES = {
  /** A 304 to a conditional request: the block is the 304's header block. */
  not_modified: 'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
  /** A 200 whose payload has the digest of the response referred to: the block is this response's header block. */
  identical: 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
} as const;

/** One WARC record, gzipped on its own (a member per record, so readers can seek to any record). */
function record(fields: Array<[string, string]>, block: Buffer): Buffer {
  const head = ['WARC/1.1', ...fields.map(([k, v]) => `${k}: ${v}`), `Content-Length: ${block.byteLength}`, '', ''].join(CRLF);
  return gzipSync(Buffer.concat([Buffer.from(head, 'utf8'), block, Buffer.from(CRLF + CRLF)]), { level: 6 });
}

/** The warcinfo record that opens the file. */
export function warcinfoRecord(info: WarcInfo = {}, now = new Date()): Buffer {
  const lines = {
    software: info.software ?? 'fetch-router',
    format: 'WARC File Format 1.1',
    conformsTo: 'http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/',
    ...info.fields,
  };
  const block = Buffer.from(Object.entries(lines).map(([k, v]) => `${k}: ${v.replace(/[\r\n]+/g, ' ')}`).join(CRLF) + CRLF, 'utf8');
  const fields: Array<[string, string]> = [['WARC-Type', 'warcinfo'], ['WARC-Record-ID', recordId()], ['WARC-Date', warcDate(now)]];
  if (info.filename) fields.push(['WARC-Filename', info.filename]);
  fields.push(['Content-Type', 'application/warc-fields']);
  return record(fields, block);
}

/** The HTTP response header block of a page as fetched, re-framed for its stored (decoded, whole) body. */
export function httpResponseHead(page: Pick<ExportedPage, 'httpStatus' | 'headers' | 'contentType' | 'sizeBytes'>): string {
  const reason = STATUS_CODES[page.httpStatus] ?? 'Unknown';
  const lines = [`HTTP/1.1 ${page.httpStatus} ${reason}`];
  const headers = page.headers ?? (page.contentType ? { 'content-type': page.contentType } : {});
  for (const [name, value] of Object.entries(headers)) {
    if (WIRE_HEADERS.has(name)) continue;
    lines.push(`${name}: ${String(value).replace(/[\r\n]+/g, ' ')}`);
  }
  lines.push(`content-length: ${page.sizeBytes}`);
  return lines.join(CRLF) + CRLF + CRLF;
}

/** The request we made, as far as it is known: method, target and host (the fetchers' own headers are not stored). */
function httpRequestHead(url: string): string {
  const u = new URL(url);
  return [`GET ${u.pathname}${u.search} HTTP/1.1`, `host: ${u.host}`].join(CRLF) + CRLF + CRLF;
}

/**
 * The `response` and `request` records of one page: the response's block is the HTTP status line, the headers as
 * fetched (cookies were never stored) and the stored body; WARC-Payload-Digest is the body's sha256.
 */
export function pageRecords(page: ExportedPage): Buffer {
  const responseId = responseRecordId({ contentId: page.id, sha256: page.sha256, fetchedAt: page.fetchedAt });
  const date = warcDate(page.fetchedAt);
  const head = headerOctets(httpResponseHead(page));
  const block = Buffer.concat([head, page.body]);
  const blockDigest = createHash('sha256').update(head).update(page.body).digest();
  const response = record(
    [
      ['WARC-Type', 'response'],
      ['WARC-Record-ID', responseId],
      ['WARC-Date', date],
      ['WARC-Target-URI', page.finalUrl],
      ['WARC-Payload-Digest', warcDigestFromHex(page.sha256)],
      ['WARC-Block-Digest', `sha256:${base32(blockDigest)}`],
      ['Content-Type', 'application/http; msgtype=response'],
    ],
    block,
  );
  return Buffer.concat([response, requestRecord(page.finalUrl, date, responseId)]);
}

/** The request record of a visit, pointing at its response or revisit record. */
function requestRecord(url: string, date: string, concurrentTo: string): Buffer {
  const requestBlock = Buffer.from(httpRequestHead(url), 'utf8');
  return record(
    [
      ['WARC-Type', 'request'],
      ['WARC-Record-ID', recordId()],
      ['WARC-Date', date],
      ['WARC-Target-URI', url],
      ['WARC-Concurrent-To', concurrentTo],
      ['WARC-Block-Digest', warcDigest(requestBlock)],
      ['Content-Type', 'application/http; msgtype=request'],
    ],
    requestBlock,
  );
}

/**
 * The `revisit` and `request` records of a visit that found the page unchanged, as Heritrix writes them: the block is
 * the HTTP header block of this visit's answer (a 304's, or the 200's whose body was not stored again), and
 * WARC-Refers-To, WARC-Refers-To-Target-URI and WARC-Refers-To-Date name the response record of the version it
 * confirmed. An identical payload carries that payload's digest.
 */
export function revisitRecords(visit: ExportedRevisit): Buffer {
  const id = recordId();
  const date = warcDate(visit.visitedAt);
  const reason = STATUS_CODES[visit.httpStatus] ?? 'Unknown';
  const lines = [`HTTP/1.1 ${visit.httpStatus} ${reason}`];
  for (const [name, value] of Object.entries(visit.headers ?? {})) {
    if (WIRE_HEADERS.has(name)) continue;
    lines.push(`${name}: ${String(value).replace(/[\r\n]+/g, ' ')}`);
  }
  const block = headerOctets(lines.join(CRLF) + CRLF + CRLF);
  const ref = visit.refersTo;
  const fields: Array<[string, string]> = [
    ['WARC-Type', 'revisit'],
    ['WARC-Record-ID', id],
    ['WARC-Date', date],
    ['WARC-Target-URI', visit.finalUrl],
    ['WARC-Profile', REVISIT_PROFILES[visit.kind]],
    ['WARC-Refers-To', responseRecordId({ contentId: ref.contentId, sha256: ref.sha256, fetchedAt: ref.fetchedAt })],
    ['WARC-Refers-To-Target-URI', ref.finalUrl],
    ['WARC-Refers-To-Date', warcDate(ref.fetchedAt)],
  ];
  if (visit.kind === 'identical') fields.push(['WARC-Payload-Digest', warcDigestFromHex(ref.sha256)]);
  fields.push(['WARC-Block-Digest', warcDigest(block)], ['Content-Type', 'application/http; msgtype=response']);
  return Buffer.concat([record(fields, block), requestRecord(visit.finalUrl, date, id)]);
}
