/**
 * The text encodings and content codings of the real web, end to end: sim-web's encodings site (charsets declared by
 * `<meta>`, header, BOM or nowhere; Shift_JIS, EUC-KR, GB18030, windows-1251, ISO-8859-2; non-ASCII queries in pages
 * that are not UTF-8; `<base href>`; gzip, x-gzip, br, both deflates, zstd (the reference encoder's frames and raw
 * blocks), stacked codings, a lying gzip and zstd, a cut gzip and zstd;
 * text/plain, XHTML, JSON, PDF) crawled with link following by plain HTTP on real Postgres and Redis, then read back
 * as a user gets it: the text and Markdown of `crawl content` / `GET /links/:id/content`, and the JSONL export.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPages, readContent } from '@crawler/export';
import { startEncodingSite, type EncodingCase } from '@crawler/sim-web';
import type { TestServer } from '@crawler/testkit';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler;
let site: TestServer & { cases: EncodingCase[] };
const byPath = new Map<string, { id: string; status: string; attemptCount: number; lastErrorType: string | null; found: string[] }>();

beforeAll(async () => {
  site = await startEncodingSite({ host: '127.0.0.47' });
  crawler = await startE2e('encodings', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:4', DOMAIN_MAX_CONCURRENCY: '4', PROBE_TIMEOUT_MS: '30000' });
  crawler.runtime.startWorkers();
  const created = await crawler.runtime.crawls.create({ seeds: site.cases.map((c) => site.url(c.path)), maxDepth: 1 });
  const id = created.crawl.id;
  await waitFor(async () => (await crawler.runtime.crawlStore.view(id))?.state !== 'running', `crawl ${id} to settle`, 180_000);
  const links = await crawler.db.prisma.link.findMany({ select: { id: true, url: true, status: true, attemptCount: true, lastErrorType: true, discoveredFromId: true } });
  for (const l of links.filter((l) => l.discoveredFromId === null)) {
    const found = links.filter((k) => k.discoveredFromId === l.id).map((k) => { const u = new URL(k.url); return u.pathname + u.search; });
    byPath.set(new URL(l.url).pathname, { ...l, found: found.sort() });
  }
}, 240_000);

afterAll(async () => {
  await crawler?.cleanup();
  await site?.close();
});

describe('end to end: the encodings of the real web, from the fetch to what a user reads', () => {
  it('settles every case once, each page done or failed with the error it deserves, and no link lost', () => {
    const seen = site.cases.map((c) => {
      const l = byPath.get(c.path);
      return [c.path, l?.status, l?.status === 'failed' ? l.lastErrorType : null];
    });
    expect(seen).toEqual(site.cases.map((c) => [c.path, c.expect.fails ? 'failed' : 'done', c.expect.fails ? expect.stringContaining(c.expect.fails) : null]));
    // A decoding failure is the same next time: one attempt, no retries that cost the site requests.
    for (const c of site.cases) expect(byPath.get(c.path)!.attemptCount, c.path).toBe(1);
  });

  it('extracts each page\'s links, a non-UTF-8 page\'s query in its own encoding and relative links against <base href>', () => {
    const found = Object.fromEntries(site.cases.map((c) => [c.path, byPath.get(c.path)!.found]));
    expect(found).toEqual(Object.fromEntries(site.cases.map((c) => [c.path, [...c.expect.links].sort()])));
  });

  it('gives the title and the text in the page\'s own characters as text and as Markdown', async () => {
    const wrong: string[] = [];
    for (const c of site.cases.filter((c) => !c.expect.fails && c.expect.text !== null)) {
      for (const format of ['text', 'markdown'] as const) {
        const out = Buffer.from((await readContent(crawler.db.prisma, byPath.get(c.path)!.id, format))!.body).toString('utf8');
        if (!out.includes(c.expect.text!) || (c.expect.title !== null && !out.includes(c.expect.title))) wrong.push(`${c.path} ${format}: ${out.slice(0, 160)}`);
        if (out.includes('\ufffd')) wrong.push(`${c.path} ${format}: U+FFFD in ${out.slice(0, 160)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('exports every stored page in JSONL with the charset its text is in, the bytes as they were decoded', async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of exportPages(crawler.db.prisma, { format: 'jsonl' })) chunks.push(chunk);
    const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { url: string; charset: string | null; body: string; bodyEncoding: string });
    const charsetOf = (path: string) => lines.find((l) => new URL(l.url).pathname === path)?.charset;
    expect({
      undeclared: charsetOf('/enc/undeclared-1252'), meta: charsetOf('/enc/meta-charset-1251'), headerWins: charsetOf('/enc/header-wins'),
      bom: charsetOf('/enc/bom-utf16be'), sjis: charsetOf('/enc/header-sjis'), pdf: charsetOf('/enc/doc.pdf'), gzip: charsetOf('/enc/gzip'),
    }).toEqual({ undeclared: 'windows-1252', meta: 'windows-1251', headerWins: 'windows-1251', bom: 'utf-16be', sjis: 'shift_jis', pdf: null, gzip: 'utf-8' });
    // Stored pages are the decoded bodies, never still compressed: the gzip and zstd pages' bodies are their HTML.
    for (const name of ['gzip', 'zstd']) {
      const page = lines.find((l) => new URL(l.url).pathname === `/enc/${name}`)!;
      expect(page.bodyEncoding === 'utf8' ? page.body : Buffer.from(page.body, 'base64').toString('utf8')).toContain(`<title>Coded ${name}</title>`);
    }
    // Neither failed page was stored.
    expect(lines.filter((l) => ['/enc/fake-zstd', '/enc/fake-gzip'].includes(new URL(l.url).pathname))).toEqual([]);
  });
});
