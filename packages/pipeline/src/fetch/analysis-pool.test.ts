import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger, ResponseSnapshot } from '@crawler/core';
import { AnalysisPool } from './analysis-pool.js';
import { analyzeSnapshot } from './response-analysis.js';

const FIXTURES = new URL('../../../core/src/validation/__fixtures__/', import.meta.url);

/** Real pages of several kinds (challenges, paywalls, SPA shells, articles), as a fetch worker sees them. */
function corpus(): ResponseSnapshot[] {
  const names = readdirSync(FIXTURES).filter((n) => n.endsWith('.html')).sort();
  const pick = [...names.filter((n) => n.startsWith('challenge-')).slice(0, 4), ...names.filter((n) => !n.startsWith('challenge-')).slice(0, 8)];
  return pick.map((n, i) => {
    const html = readFileSync(new URL(n, FIXTURES), 'utf8');
    return {
      status: n.includes('403') ? 403 : 200,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      // Half as text, half as bytes: the fetcher hands over either.
      body: i % 2 === 0 ? html : new TextEncoder().encode(html),
      url: `https://site${i}.example/${n}`,
    };
  });
}

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const logger = {
    warnings,
    warn: (_o: unknown, msg?: string) => void warnings.push(String(msg)),
    info: () => undefined, debug: () => undefined, error: () => undefined, trace: () => undefined, fatal: () => undefined,
    child: () => logger,
  };
  return logger as unknown as Logger & { warnings: string[] };
}

/** A thread entry written to a temporary file from its lines. */
function entryFile(name: string, lines: string[]): URL {
  const file = join(mkdtempSync(join(tmpdir(), 'analysis-pool-')), `${name}.mjs`);
  writeFileSync(file, ["import { parentPort } from 'node:worker_threads';", ...lines].join('\n'));
  return pathToFileURL(file);
}

/** A thread entry that analyses as the real one does, after `boot` (start-up code) and `before` (run on each request). */
function analysingEntry(name: string, before: string, boot = ''): URL {
  const analysis = new URL('../../dist/fetch/response-analysis.js', import.meta.url).href;
  return entryFile(name, [
    `import { analyzeSnapshot } from ${JSON.stringify(analysis)};`,
    boot,
    "parentPort.on('message', (req) => {",
    `  ${before}`,
    '  parentPort.postMessage({ id: req.id, result: analyzeSnapshot(req.snap) });',
    '});',
    'parentPort.postMessage({ ready: true });',
  ]);
}

/** A thread entry that dies on its first message (process.exit in a worker ends the thread, not the process). */
function dyingEntry(): URL {
  return entryFile('dying-worker', ["parentPort.on('message', () => process.exit(3));"]);
}

/** A thread entry that analyses as the real one does, after `bootMs` of start-up and `perMs` of work on each response. */
function slowEntry(bootMs: number, perMs: number): URL {
  return analysingEntry('slow-worker', `const until = Date.now() + ${perMs}; while (Date.now() < until);`, `await new Promise((r) => setTimeout(r, ${bootMs}));`);
}

/** A thread entry that analyses as the real one does, but spins for ever on a body that says HANG (a runaway detector). */
function hangingEntry(): URL {
  return analysingEntry('hanging-worker', "if (typeof req.snap.body === 'string' && req.snap.body.includes('HANG')) for (;;);");
}

const pools: AnalysisPool[] = [];
function pool(opts: ConstructorParameters<typeof AnalysisPool>[0]): AnalysisPool {
  const p = new AnalysisPool(opts);
  pools.push(p);
  return p;
}

/** A pool whose warnings and thread events are recorded. */
function watchedPool(opts: Omit<ConstructorParameters<typeof AnalysisPool>[0], 'logger' | 'metrics'>) {
  const logger = recordingLogger();
  const events: string[] = [];
  return { p: pool({ ...opts, logger, metrics: { analysisThreadEvent: (e) => void events.push(e) } }), logger, events };
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('AnalysisPool', () => {
  it('gives, from its threads, the analysis the event loop gives', async () => {
    const snaps = corpus();
    expect(snaps.length).toBeGreaterThanOrEqual(8);
    const p = pool({ threads: 2 });
    const got = await Promise.all(snaps.map((s) => p.analyze(s)));
    expect(p.threads).toBe(2);
    expect(got).toEqual(snaps.map((s) => analyzeSnapshot(s)));
    // The corpus is not all alike: the comparison covers blocked and readable pages.
    expect(new Set(got.map((a) => a.validation.isBlocked)).size).toBe(2);
  });

  it('sends a long page\'s first bytes only, leaving the response\'s own bytes whole, and gives the same analysis', async () => {
    const text = `<html><head><title>long</title></head><body><p>${'words of a long page '.repeat(400_000)}</p></body></html>`;
    const body = new TextEncoder().encode(text);
    const snap = { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body, charset: 'utf-8' };
    const got = await pool({ threads: 1 }).analyze(snap);
    expect(body.byteLength).toBe(text.length);
    expect(body[body.byteLength - 1]).toBe(0x3e);
    expect(got).toEqual(analyzeSnapshot({ status: 200, headers: snap.headers, body: text }));
    expect(got.validation.isBlocked).toBe(false);
  });

  it('starts no thread until the first response, and none with 0 threads', async () => {
    const lazy = pool({ threads: 1 });
    expect(lazy.threads).toBe(0);
    const none = pool({ threads: 0 });
    const [snap] = corpus();
    expect(await none.analyze(snap!)).toEqual(analyzeSnapshot(snap!));
    expect(none.threads).toBe(0);
  });

  it('analyses on the event loop what a dying thread held, replaces it, and gives up on threads after maxDeaths', async () => {
    const { p, logger, events } = watchedPool({ threads: 1, entry: dyingEntry(), maxDeaths: 2 });
    const [a, b] = corpus();
    // Both go to the one thread, which dies on the first: neither is lost.
    expect(await Promise.all([p.analyze(a!), p.analyze(b!)])).toEqual([analyzeSnapshot(a!), analyzeSnapshot(b!)]);
    expect(logger.warnings).toEqual(['response analysis thread died: its responses are analysed on the event loop, a new thread starts on the next one']);
    // A new thread, which dies too: the pool stops starting threads.
    expect(await p.analyze(a!)).toEqual(analyzeSnapshot(a!));
    expect(logger.warnings.at(-1)).toBe('response analysis threads keep dying: analysing on the event loop from now on');
    expect(await p.analyze(b!)).toEqual(analyzeSnapshot(b!));
    expect(p.threads).toBe(0);
    expect(events).toEqual(['died', 'died']);
  });

  it('warm starts its threads before the first response; not after close, and not with 0 threads', async () => {
    const p = pool({ threads: 2 });
    p.warm();
    expect(p.threads).toBe(2);
    const [a] = corpus();
    expect(await p.analyze(a!)).toEqual(analyzeSnapshot(a!));
    expect(p.threads).toBe(2);
    await p.close();
    p.warm();
    expect(p.threads).toBe(0);
    const none = pool({ threads: 0 });
    none.warm();
    expect(none.threads).toBe(0);
  });

  it('fails a response that takes too long, stops its thread, and gives the responses queued behind it to a new one', async () => {
    const { p, logger, events } = watchedPool({ threads: 1, entry: hangingEntry(), timeoutMs: 500 });
    const [a, b] = corpus();
    const hang = { status: 200, headers: { 'content-type': 'text/html' }, body: '<p>HANG</p>', url: 'https://hostile.example/' };
    const stuck = p.analyze(hang);
    const behind = [p.analyze(a!), p.analyze(b!)];
    await expect(stuck).rejects.toThrow('response analysis took longer than 500 ms (https://hostile.example/)');
    expect(await Promise.all(behind)).toEqual([analyzeSnapshot(a!), analyzeSnapshot(b!)]);
    expect(p.threads).toBe(1);
    expect(logger.warnings).toEqual(['response analysis took too long: the response fails and its thread is stopped']);
    // The new thread is a thread, not the event loop: the next page that hangs fails the same way.
    await expect(p.analyze(hang)).rejects.toThrow(/took longer than 500 ms/);
    // Stopped threads are not deaths: the pool keeps its threads however many pages hang.
    expect(events).toEqual(['timed_out', 'timed_out']);
  });

  it('counts only the thread\'s work on a response against its deadline: not the thread\'s start-up, not the queue', async () => {
    // Start-up 1 s, 100 ms a response (and the analysis), deadline 600 ms: four responses sent at once wait 1 s and
    // more from their sending, and every one still answers.
    const { p, events } = watchedPool({ threads: 1, entry: slowEntry(1000, 100), timeoutMs: 600 });
    const four = corpus().slice(0, 4);
    expect(await Promise.all(four.map((s) => p.analyze(s)))).toEqual(four.map((s) => analyzeSnapshot(s)));
    expect(events).toEqual([]);
    await p.close();
  });

  it('after close, analyses on the event loop', async () => {
    const p = pool({ threads: 1 });
    const [a] = corpus();
    await p.analyze(a!);
    expect(p.threads).toBe(1);
    await p.close();
    expect(p.threads).toBe(0);
    expect(await p.analyze(a!)).toEqual(analyzeSnapshot(a!));
    expect(p.threads).toBe(0);
  });
});

describe('plain HTTP responses on the analysis thread', () => {
  it('travel as bytes and their charset, and are analysed as their text reads, legacy charsets included', async () => {
    const { createServer } = await import('node:http');
    const { createHttpFetcher } = await import('@crawler/fetchers');
    const { analysisInputOf } = await import('./response-analysis.js');
    const iconv = (await import('iconv-lite')).default;
    const article = (s: string) => `<html><head><meta charset="SET"><title>${s}</title></head><body><article><h1>${s}</h1>${`<p>${s} — “quoted” text of the article, long enough to read.</p>`.repeat(30)}</article></body></html>`;
    const pages: Record<string, { type: string; body: Buffer }> = {
      '/utf8': { type: 'text/html; charset=utf-8', body: Buffer.from(article('Café déjà vu')) },
      '/cp1252': { type: 'text/html', body: iconv.encode(article('Œuvre €5 naïve').replace('SET', 'windows-1252'), 'windows-1252') },
      '/sjis': { type: 'text/html; charset=shift_jis', body: iconv.encode(article('日本語の記事です'), 'shift_jis') },
      '/challenge': { type: 'text/html; charset=utf-8', body: Buffer.from('<html><head><title>Just a moment...</title></head><body><div id="challenge-form">Checking your browser before accessing. cf-chl</div></body></html>') },
    };
    const server = createServer((req, res) => {
      const page = pages[req.url ?? ''];
      res.writeHead(page ? 200 : 404, { 'content-type': page?.type ?? 'text/plain' });
      res.end(page?.body ?? '');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const http = createHttpFetcher({ allowPrivateNetworks: true });
    const p = pool({ threads: 1 });
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      for (const path of Object.keys(pages)) {
        const res = await http.fetch({ url: `${base}${path}` });
        const input = analysisInputOf(res);
        // Bytes on the way, not the decoded page.
        expect(input.body, path).toBeInstanceOf(Uint8Array);
        expect(input.charset, path).toBeDefined();
        const fromThread = await p.analyze(input);
        // What the event loop makes of the text the fetcher decodes.
        expect(fromThread, path).toEqual(analyzeSnapshot({ status: res.status, headers: res.headers, body: res.text!, url: res.finalUrl }));
      }
      expect(p.threads).toBe(1);
      expect((await http.fetch({ url: `${base}/sjis` })).text).toContain('日本語の記事です');
      expect((await http.fetch({ url: `${base}/cp1252` })).text).toContain('Œuvre €5 naïve');
    } finally {
      await http.close();
      await new Promise((r) => server.close(r));
    }
  });
});
