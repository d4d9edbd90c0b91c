/** `crawl content` and `crawl export` against a real Postgres. */
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ContentStore, LinkStore } from '@crawler/db';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { UsageError, type CommandIO } from '../command.js';
import content from './content.js';
import exportCommand from './export.js';

let db: TestDatabase;
let dir: string;
let linkId: string;
const LATIN = Buffer.from('<html><head><title>Caf\xe9</title></head><body><h1>Caf\xe9 cr\xe8me</h1><p>Un <a href="/menu">menu</a> \x80</p></body></html>', 'latin1');

beforeAll(async () => {
  db = await createTestDatabase('cli_pages');
  dir = await mkdtemp(join(tmpdir(), 'crawl-export-'));
  const [link] = await new LinkStore(db.prisma).upsertMany([{ url: 'https://cafe.example/', initialUrl: 'https://cafe.example/', domain: 'cafe.example' }]);
  linkId = link!.id;
  await new ContentStore({ prisma: db.prisma }).saveAndComplete({
    linkId, body: LATIN, contentType: 'text/html', httpStatus: 200, finalUrl: 'https://cafe.example/', fetcher: 'simple_http', headers: { 'content-type': 'text/html; charset=windows-1252' },
  });
});

afterAll(async () => {
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function run(cmd: typeof content, args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  let err = '';
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const io: CommandIO = { stdin: new PassThrough(), stdout, stderr, env: { DATABASE_URL: db.url } };
  const code = await cmd.run(args, io);
  return { code, stdout: Buffer.concat(out), stderr: err };
}

describe('crawl content', () => {
  it('prints the page as fetched, by id or by URL', async () => {
    const byId = await run(content, [linkId]);
    expect(byId.code).toBe(0);
    expect(Buffer.compare(byId.stdout, LATIN)).toBe(0);
    // The URL is normalized the way links are: another spelling of the same page finds it.
    const byUrl = await run(content, ['HTTPS://Cafe.Example:443/#top']);
    expect(Buffer.compare(byUrl.stdout, LATIN)).toBe(0);
  });

  it('prints Markdown and text, decoded from the page charset', async () => {
    const md = await run(content, [linkId, '--format', 'markdown']);
    expect(md.stdout.toString()).toContain('# Café crème');
    expect(md.stdout.toString()).toContain('[menu](https://cafe.example/menu)');
    expect((await run(content, [linkId, '--format=text'])).stdout.toString()).toContain('Un menu €');
  });

  it('says when there is nothing, and refuses bad arguments', async () => {
    const none = await run(content, ['https://cafe.example/other']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no link');
    await expect(run(content, [linkId, '--format', 'pdf'])).rejects.toThrow(UsageError);
    await expect(run(content, [])).rejects.toThrow(UsageError);
  });
});

describe('crawl export', () => {
  it('writes JSONL to stdout and WARC to a file', async () => {
    const jsonl = await run(exportCommand, ['--format', 'jsonl', '--status', 'done']);
    expect(jsonl.code).toBe(0);
    const [line, ...rest] = jsonl.stdout.toString().trim().split('\n');
    expect(rest).toHaveLength(0);
    const obj = JSON.parse(line!) as { url: string; bodyEncoding: string; body: string; contentType: string };
    expect(obj).toMatchObject({ url: 'https://cafe.example/', bodyEncoding: 'base64', contentType: 'text/html; charset=windows-1252' });
    expect(Buffer.compare(Buffer.from(obj.body, 'base64'), LATIN)).toBe(0);

    const out = join(dir, 'pages.warc.gz');
    const warc = await run(exportCommand, ['--format', 'warc', '--domain', 'cafe.example', '--out', out]);
    expect(warc.code).toBe(0);
    expect(warc.stderr).toContain('exported 1 visits');
    const bytes = await readFile(out);
    expect(bytes.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    await expect(stat(`${out}.partial`)).rejects.toThrow();
  });

  it('resumes from --cursor-file: each run exports what committed since the last complete one, and says where it stopped', async () => {
    const cursorFile = join(dir, 'export.cursor');
    const first = await run(exportCommand, ['--format', 'jsonl', '--domain', 'resume.example', '--cursor-file', cursorFile]);
    expect(first.stdout.toString()).toBe('');
    const cursor1 = (await readFile(cursorFile, 'utf8')).trim();
    expect(first.stderr).toContain(`cursor: ${cursor1}\n`);

    const url = 'https://resume.example/new';
    const [link] = await new LinkStore(db.prisma).upsertMany([{ url, initialUrl: url, domain: 'resume.example' }]);
    await new ContentStore({ prisma: db.prisma }).saveAndComplete({ linkId: link!.id, body: Buffer.from('new'), contentType: 'text/plain', httpStatus: 200, finalUrl: url, fetcher: 'simple_http' });
    const second = await run(exportCommand, ['--format', 'jsonl', '--domain', 'resume.example', '--cursor-file', cursorFile]);
    expect(second.stdout.toString()).toContain('"url":"https://resume.example/new"');
    const cursor2 = (await readFile(cursorFile, 'utf8')).trim();
    expect(cursor2).not.toBe(cursor1);
    expect((await run(exportCommand, ['--format', 'jsonl', '--domain', 'resume.example', '--cursor-file', cursorFile])).stdout.toString()).toBe('');
    // --after takes the printed cursor as it is.
    const again = await run(exportCommand, ['--format', 'jsonl', '--domain', 'resume.example', '--after', cursor1]);
    expect(again.stdout.toString().trim().split('\n')).toHaveLength(1);

    await writeFile(cursorFile, 'last tuesday\n');
    await expect(run(exportCommand, ['--cursor-file', cursorFile])).rejects.toThrow(/does not hold a cursor/);
    await expect(run(exportCommand, ['--after', 'yesterday'])).rejects.toThrow(/--after must be a cursor/);
    await expect(run(exportCommand, ['--after', '999999999999:999999999999:'])).rejects.toThrow(/not from this database/);
    await expect(run(exportCommand, ['--after', cursor1, '--cursor-file', cursorFile])).rejects.toThrow(UsageError);
  });

  it('makes the output durable before the cursor that points past it: a power cut cannot keep the new cursor and lose the pages', async () => {
    // The order on disk is what matters; what a test can see is that both files were flushed (fsync) before the
    // export returned: without it, a crash after the renames could leave the cursor new and the output empty.
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const original = proto.sync;
    const out = join(dir, 'durable.jsonl');
    const cursorFile = join(dir, 'durable.cursor');
    // For each flush: whether the cursor was in place yet.
    const synced: boolean[] = [];
    const spy = vi.spyOn(proto, 'sync').mockImplementation(function (this: unknown) {
      synced.push(existsSync(cursorFile));
      return original.call(this);
    });
    try {
      await run(exportCommand, ['--format', 'jsonl', '--domain', 'cafe.example', '--out', out, '--cursor-file', cursorFile]);
      expect((await readFile(out, 'utf8')).length).toBeGreaterThan(0);
      expect((await readFile(cursorFile, 'utf8')).trim()).not.toBe('');
      // The output and its folder before the cursor is in place; then the cursor and its folder.
      expect(synced.length).toBeGreaterThanOrEqual(2);
      expect(synced[0]).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });

  it('lets one export at a time hold a --cursor-file: a run that overlaps another would hand out a cursor past pages the other writes', async () => {
    // Two runs from one cursor (a cron job whose export outlasts its interval) write the same output name and the
    // same cursor: whichever renames last wins each, so the cursor could end up past an output that never held them.
    const cursorFile = join(dir, 'locked.cursor');
    const before = `${(await run(exportCommand, ['--format', 'jsonl', '--domain', 'resume.example', '--cursor-file', cursorFile])).stderr}`;
    const cursor = (await readFile(cursorFile, 'utf8')).trim();
    expect(before).toContain(`cursor: ${cursor}`);
    await expect(stat(`${cursorFile}.lock`)).rejects.toThrow();

    // This process is alive: as another export still running would be.
    await writeFile(`${cursorFile}.lock`, `${process.pid} ${hostname()}\n`);
    await expect(run(exportCommand, ['--format', 'jsonl', '--domain', 'resume.example', '--cursor-file', cursorFile])).rejects.toThrow(/in use by another export/);
    expect((await readFile(cursorFile, 'utf8')).trim()).toBe(cursor);

    // A lock left by an export that died (its process is gone) is taken over.
    const gone = spawnSync('true').pid;
    await writeFile(`${cursorFile}.lock`, `${gone} ${hostname()}\n`);
    const after = await run(exportCommand, ['--format', 'jsonl', '--domain', 'resume.example', '--cursor-file', cursorFile]);
    expect(after.code).toBe(0);
    await expect(stat(`${cursorFile}.lock`)).rejects.toThrow();
  });

  it('refuses bad filters', async () => {
    await expect(run(exportCommand, ['--format', 'csv'])).rejects.toThrow(UsageError);
    await expect(run(exportCommand, ['--since', 'last week'])).rejects.toThrow(UsageError);
    await expect(run(exportCommand, ['--status', 'finished'])).rejects.toThrow(UsageError);
    await expect(run(exportCommand, ['--domain', 'not a host'])).rejects.toThrow(UsageError);
  });

  it('reads --domain as links store it: www. and upper case find the host', async () => {
    const jsonl = await run(exportCommand, ['--format', 'jsonl', '--domain', 'WWW.Cafe.example']);
    expect(jsonl.code).toBe(0);
    expect(jsonl.stdout.toString()).toContain('"url":"https://cafe.example/"');
  });
});

describe('crawl content --version', () => {
  it('prints an older version with --version N, the latest without; an unknown or bad version is named', async () => {
    const url = 'https://cafe.example/menu';
    const [link] = await new LinkStore(db.prisma).upsertMany([{ url, initialUrl: url, domain: 'cafe.example' }]);
    const store = new ContentStore({ prisma: db.prisma });
    for (const text of ['menu one', 'menu two']) {
      await store.save({ linkId: link!.id, body: Buffer.from(text), contentType: 'text/plain', httpStatus: 200, finalUrl: url, fetcher: 'simple_http' });
    }
    expect((await run(content, [url])).stdout.toString()).toBe('menu two');
    expect((await run(content, [url, '--version', '1'])).stdout.toString()).toBe('menu one');
    const missing = await run(content, [link!.id, '--version', '3']);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining('no stored version 3')]);
    await expect(run(content, [url, '--version', '0'])).rejects.toThrow(/--version must be/);
    await expect(run(content, [url, '--version', 'x'])).rejects.toThrow(UsageError);
    // Past the largest version a page can have (a Postgres integer): named as a usage error, not a database stack trace.
    await expect(run(content, [url, '--version', '99999999999'])).rejects.toThrow(/--version must be .*2147483647/);
  });
});

describe('crawl content of a page served without a Content-Type', () => {
  it('sniffs it as HTML for --format markdown and text, as the fetcher and validator did', async () => {
    const url = 'https://cafe.example/untyped';
    const [link] = await new LinkStore(db.prisma).upsertMany([{ url, initialUrl: url, domain: 'cafe.example' }]);
    const body = Buffer.from('<!doctype html><html><head><title>Untyped</title></head><body><h1>Plat du jour</h1><p>Soupe, <a href="/menu">menu</a>.</p></body></html>');
    await new ContentStore({ prisma: db.prisma }).save({ linkId: link!.id, body, contentType: null, httpStatus: 200, finalUrl: url, fetcher: 'simple_http', headers: {} });
    const md = await run(content, [url, '--format', 'markdown']);
    expect([md.code, md.stderr]).toEqual([0, '']);
    expect(md.stdout.toString()).toContain('[menu](https://cafe.example/menu)');
    expect((await run(content, [url, '--format', 'text'])).stdout.toString()).toContain('Plat du jour');
  });
});
