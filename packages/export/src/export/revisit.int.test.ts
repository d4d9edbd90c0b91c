/**
 * Exports of pages visited twice: WARC revisit records for unchanged visits (a 304, the same body), pointing at the
 * response of the version they confirmed, as Heritrix writes them; read back by warcio.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WARCParser } from 'warcio';
import { ManualClock } from '@crawler/core';
import { OutcomeStore, VersionStore } from '@crawler/db';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { exportPages } from './export-pages.js';
import { REVISIT_PROFILES, warcDigestFromHex } from './warc.js';

let db: TestDatabase;
const clock = new ManualClock(Date.parse('2026-05-01T00:00:00Z'));
const links = new Map<string, string>();
let between: Date;

const DONE = { status: 'done', riskLevel: 0, pausedUntil: null, fetcher: 'simple_http', lastErrorType: null, lastError: null } as const;
const body = (name: string, rev: number) => Buffer.from(`<html><body><h1>${name} revision ${rev}</h1></body></html>`);

beforeAll(async () => {
  db = await createTestDatabase('export_revisit');
  const outcomes = new OutcomeStore({ prisma: db.prisma, clock });
  for (const name of ['etag', 'modified', 'plain', 'changed']) {
    const url = `https://r.example/${name}`;
    const l = await db.prisma.link.create({ data: { url, initialUrl: url, domain: 'r.example', status: 'fetching' } });
    links.set(name, l.id);
    clock.advance(1_000);
    await outcomes.apply({
      linkId: l.id, attempts: [], link: DONE,
      page: { linkId: l.id, body: body(name, 1), contentType: 'text/html', httpStatus: 200, finalUrl: url, fetcher: 'simple_http', headers: { 'content-type': 'text/html', etag: `"${name}-1"` } },
    });
  }
  clock.advance(86_400_000);
  between = clock.now();
  await new VersionStore({ prisma: db.prisma, clock }).reopenForRevisit([...links.values()]);
  for (const [name, id] of links) {
    const url = `https://r.example/${name}`;
    clock.advance(1_000);
    await db.prisma.link.update({ where: { id }, data: { status: 'fetching' } });
    if (name === 'etag' || name === 'modified') {
      await outcomes.apply({ linkId: id, attempts: [], link: DONE, notModified: { fetcher: 'simple_http', httpStatus: 304, finalUrl: url, headers: { etag: `"${name}-1"`, date: 'Sat, 02 May 2026 00:00:00 GMT' } } });
    } else {
      const rev = name === 'changed' ? 2 : 1;
      await outcomes.apply({
        linkId: id, attempts: [], link: DONE,
        page: { linkId: id, body: body(name, rev), contentType: 'text/html', httpStatus: 200, finalUrl: url, fetcher: 'simple_http', headers: { 'content-type': 'text/html', server: 'test' } },
      });
    }
  }
});

afterAll(async () => {
  await db?.drop();
});

async function collect(gen: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of gen) parts.push(chunk);
  return Buffer.concat(parts);
}

interface Rec { type: string; id: string; uri: string; date: string; headers: Map<string, string>; status: number | null; payload: Buffer }

async function records(warc: Buffer): Promise<Rec[]> {
  const out: Rec[] = [];
  for await (const r of WARCParser.iterRecords(Readable.from([warc]))) {
    const headers = new Map<string, string>();
    for (const k of ['WARC-Concurrent-To', 'WARC-Profile', 'WARC-Refers-To', 'WARC-Refers-To-Target-URI', 'WARC-Refers-To-Date', 'WARC-Payload-Digest']) {
      const v = r.warcHeader(k);
      if (v) headers.set(k, v);
    }
    const info = r.warcType === 'response' || r.warcType === 'revisit' ? r.getResponseInfo() : null;
    const payload = Buffer.from(await r.readFully(false));
    out.push({ type: r.warcType!, id: r.warcHeader('WARC-Record-ID') ?? '', uri: r.warcTargetURI ?? '', date: r.warcDate ?? '', headers, status: info ? Number(info.status) : null, payload });
  }
  return out;
}

describe('WARC export of revisits', () => {
  it('writes a response per new version and a revisit per unchanged visit, each pointing at the original response', async () => {
    const recs = await records(await collect(exportPages(db.prisma, { format: 'warc', pageSize: 3 })));
    const main = recs.filter((r) => r.type === 'response' || r.type === 'revisit');
    expect(main.map((r) => `${r.type} ${new URL(r.uri).pathname} ${r.status}`)).toEqual([
      'response /etag 200', 'response /modified 200', 'response /plain 200', 'response /changed 200',
      'revisit /etag 304', 'revisit /modified 304', 'revisit /plain 200', 'response /changed 200',
    ]);
    // One request record per visit, concurrent to it.
    const requests = recs.filter((r) => r.type === 'request');
    expect(requests.map((r) => r.headers.get('WARC-Concurrent-To'))).toEqual(main.map((r) => r.id));

    const originals = new Map(main.slice(0, 4).map((r) => [r.uri, r]));
    for (const revisit of main.filter((r) => r.type === 'revisit')) {
      const original = originals.get(revisit.uri)!;
      const name = new URL(revisit.uri).pathname.slice(1);
      expect(revisit.headers.get('WARC-Profile')).toBe(name === 'plain' ? REVISIT_PROFILES.identical : REVISIT_PROFILES.not_modified);
      expect(revisit.headers.get('WARC-Refers-To')).toBe(original.id);
      expect(revisit.headers.get('WARC-Refers-To-Target-URI')).toBe(original.uri);
      expect(revisit.headers.get('WARC-Refers-To-Date')).toBe(original.date);
      expect(new Date(revisit.date).getTime()).toBeGreaterThan(new Date(original.date).getTime());
      // No payload: the block is the answer's header block only.
      expect(revisit.payload.byteLength).toBe(0);
      if (name === 'plain') expect(revisit.headers.get('WARC-Payload-Digest')).toBe(original.headers.get('WARC-Payload-Digest'));
      else expect(revisit.headers.has('WARC-Payload-Digest')).toBe(false);
    }
    // The changed page's second response carries its new body.
    const changed = main.filter((r) => r.uri.endsWith('/changed'));
    expect(changed.map((r) => r.payload.toString())).toEqual([body('changed', 1).toString(), body('changed', 2).toString()]);
    expect(changed[1]!.headers.get('WARC-Payload-Digest')).not.toBe(changed[0]!.headers.get('WARC-Payload-Digest'));
    // Record ids of responses are stable across exports: a later incremental export's revisits can point at them.
    const again = await records(await collect(exportPages(db.prisma, { format: 'warc' })));
    expect(again.filter((r) => r.type === 'response').map((r) => r.id)).toEqual(main.filter((r) => r.type === 'response').map((r) => r.id));
  });

  it('--since: WARC holds the visits since then; JSONL the pages whose latest version is newer', async () => {
    const recs = await records(await collect(exportPages(db.prisma, { format: 'warc', since: between })));
    expect(recs.filter((r) => r.type !== 'request' && r.type !== 'warcinfo').map((r) => `${r.type} ${new URL(r.uri).pathname}`)).toEqual([
      'revisit /etag', 'revisit /modified', 'revisit /plain', 'response /changed',
    ]);
    const since = (await collect(exportPages(db.prisma, { format: 'jsonl', since: between }))).toString().trim().split('\n').map((l) => JSON.parse(l));
    expect(since.map((p) => [p.url, p.version, p.body])).toEqual([['https://r.example/changed', 2, body('changed', 2).toString()]]);
    const all = (await collect(exportPages(db.prisma, { format: 'jsonl' }))).toString().trim().split('\n').map((l) => JSON.parse(l));
    expect(all.map((p) => [new URL(p.url).pathname, p.version])).toEqual([['/etag', 1], ['/modified', 1], ['/plain', 1], ['/changed', 2]]);
    const versions = (await collect(exportPages(db.prisma, { format: 'jsonl', allVersions: true }))).toString().trim().split('\n');
    expect(versions).toHaveLength(5);
    expect(warcDigestFromHex(since[0].sha256)).toMatch(/^sha256:/);
  });
});
