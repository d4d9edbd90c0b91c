/**
 * Events under faults: a webhook receiver that answers 500 to its first 20 requests and is restarted once mid-run, a
 * crawler process SIGKILLed mid-crawl, and two dispatchers sharing the outbox. At the end every done or failed link
 * has exactly one event, the receiver accepted each of them (re-deliveries carry the same id), and every request it
 * saw was correctly signed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { silentLogger } from '@crawler/core';
import { LinkStore, OutboxStore, sqlOf } from '@crawler/db';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { enqueueLinks } from '@crawler/pipeline';
import { JobQueues, createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { startTestServer, staticArticle, type TestServer, REDIS_URL, waitFor } from '@crawler/testkit';
import { EventDispatcher } from '../dispatcher.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, verifyWebhook } from '../signature.js';

const CHILD = fileURLToPath(new URL('../__fixtures__/crawler-child.ts', import.meta.url));
const PREFIX = `{crawler_test_events_fault_${process.pid}}`;
const SECRET = 'fault-test-secret-0123456789';
const OK_PAGES = 24;
const MISSING_PAGES = 6;
const FIRST_FAILURES = 20;

let db: TestDatabase | undefined;
let site: TestServer | undefined;
let redis: Redis | undefined;
let queues: JobQueues | undefined;
const children: ChildProcess[] = [];
const dispatchers: EventDispatcher[] = [];
let receiver: Server | undefined;
const sockets = new Set<Socket>();

afterAll(async () => {
  await Promise.all(dispatchers.map((d) => d.stop()));
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const s of sockets) s.destroy();
  await new Promise((r) => (receiver ? receiver.close(r) : r(undefined)));
  await site?.close();
  await queues?.close();
  if (redis) {
    await deleteRedisPrefix(redis, PREFIX);
    redis.disconnect();
  }
  await db?.drop();
});

function startChild(env: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  let err = '';
  proc.stderr!.on('data', (d) => (err += String(d)));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d) => String(d).includes('ready') && resolve(proc));
    proc.on('exit', (code) => reject(new Error(`child exited early (${code}): ${err}`)));
  });
}


interface Seen {
  id: string;
  status: number;
  verified: boolean;
  body: string;
}

describe('webhooks under faults', () => {
  it('every done or failed link has exactly one event accepted, every signature verifies', async () => {
    const routes: Record<string, { body?: string; status?: number; delayMs?: number }> = {};
    for (let i = 0; i < OK_PAGES; i++) routes[`/ok/${i}`] = { body: staticArticle({ title: `Page ${i}` }), delayMs: 400 };
    // Pages robots.txt forbids: their links fail (robots_disallowed), so link.failed events are part of the run.
    for (let i = 0; i < MISSING_PAGES; i++) routes[`/gone/${i}`] = { body: staticArticle({ title: `Forbidden ${i}` }) };
    routes['/robots.txt'] = { body: 'User-agent: *\nDisallow: /gone/\n', headers: { 'content-type': 'text/plain' } };
    site = await startTestServer(routes);
    db = await createTestDatabase('events_fault');
    redis = createRedisConnection(REDIS_URL, 'producer');
    queues = new JobQueues({ connection: redis, prefix: PREFIX });

    // The receiver: 500 for its first 20 requests, then 200; it is closed and started again on the same port once.
    const seen: Seen[] = [];
    const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const status = seen.length < FIRST_FAILURES ? 500 : 200;
        seen.push({ id: String(req.headers[EVENT_ID_HEADER]), status, verified: verifyWebhook(SECRET, body, req.headers[SIGNATURE_HEADER] as string | undefined), body });
        res.writeHead(status).end();
      });
    };
    const listen = async (port: number) => {
      const server = createServer(handler);
      server.on('connection', (s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      return server;
    };
    receiver = await listen(0);
    const port = (receiver.address() as AddressInfo).port;

    // Two dispatchers share the outbox, with retries fast enough for a test (the production policy is the same code).
    for (let k = 0; k < 2; k++) {
      const d = new EventDispatcher({
        outbox: new OutboxStore({ prisma: db.prisma }),
        webhook: { url: `http://127.0.0.1:${port}/events`, secret: SECRET, timeoutMs: 2_000 },
        stream: null,
        logger: silentLogger,
        retry: { baseDelayMs: 100, maxDelayMs: 1_000, retryWindowMs: 3_600_000 },
        batchSize: 5,
        concurrency: 2,
        leaseMs: 5_000,
        idleDelayMs: 100,
      });
      d.start();
      dispatchers.push(d);
    }

    const env = {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      ALLOW_PRIVATE_NETWORKS: 'true',
      FETCHERS: 'simple_http:4',
      DOMAIN_MAX_CONCURRENCY: '4',
      DOMAIN_MIN_DELAY_MS: '0',
      LOCK_DURATION_MS: '2000',
      STALLED_INTERVAL_MS: '1000',
      ATTEMPT_FLUSH_SIZE: '1',
      ATTEMPT_FLUSH_INTERVAL_MS: '50',
      LOG_LEVEL: 'silent',
    };
    const urls = [...Array.from({ length: OK_PAGES }, (_, i) => site!.url(`/ok/${i}`)), ...Array.from({ length: MISSING_PAGES }, (_, i) => site!.url(`/gone/${i}`))];
    const enqueued = await enqueueLinks(urls, { links: new LinkStore(db.prisma), queues });
    expect(enqueued.accepted).toHaveLength(urls.length);

    // A crawler process is SIGKILLed while it holds jobs; a second one finishes the crawl.
    const first = await startChild(env);
    await waitFor(async () => site!.requests.length >= 6, 'the first crawler to fetch', 60_000);
    first.kill('SIGKILL');
    await new Promise((r) => (first.exitCode !== null || first.signalCode !== null ? r(undefined) : first.once('exit', r)));
    const finishedAtKill = await db.prisma.link.count({ where: { status: { in: ['done', 'failed'] } } });
    expect(finishedAtKill).toBeLessThan(urls.length);
    await startChild(env);

    // The receiver goes away once, mid-run, and comes back on the same port.
    await waitFor(async () => seen.length >= FIRST_FAILURES + 3 && seen, 'the receiver to accept some events', 60_000);
    await new Promise((r) => {
      receiver!.close(r);
      for (const s of sockets) s.destroy();
    });
    const requestsWhileUp = seen.length;
    await new Promise((r) => setTimeout(r, 1_500));
    receiver = await listen(port);

    const settled = await waitFor(async () => {
      const n = await db!.prisma.link.count({ where: { status: { in: ['done', 'failed'] } } });
      return n === urls.length ? n : null;
    }, 'every link to settle', 90_000);
    expect(settled).toBe(urls.length);
    await waitFor(async () => (await new OutboxStore({ prisma: db!.prisma }).stats()).pending === 0, 'every event to be delivered', 60_000);

    const links = await sqlOf(db.prisma).query<{ id: string; status: string }>('SELECT id::text, status FROM links');
    const events = await sqlOf(db.prisma).query<{ id: string; link: string; type: string; delivered: boolean }>(
      'SELECT id::text, link::text, type, delivered_at IS NOT NULL AS delivered FROM link_events',
    );
    // Exactly one event per finished link, of the right type.
    expect(events).toHaveLength(links.length);
    const byLink = new Map(events.map((e) => [e.link, e]));
    for (const l of links) expect(byLink.get(l.id)?.type).toBe(`link.${l.status}`);
    expect(links.filter((l) => l.status === 'failed')).toHaveLength(MISSING_PAGES);

    // The receiver accepted every event; anything it accepted twice was a re-delivery of the same id.
    const accepted = seen.filter((s) => s.status === 200);
    const acceptedIds = new Set(accepted.map((s) => s.id));
    expect(acceptedIds).toEqual(new Set(events.map((e) => e.id)));
    for (const s of accepted) expect((JSON.parse(s.body) as { id: string }).id).toBe(s.id);
    // Every request, refused or accepted, before or after the restart, carried a valid signature.
    expect(seen.every((s) => s.verified)).toBe(true);
    expect(seen.filter((s) => s.status === 500)).toHaveLength(FIRST_FAILURES);
    expect(seen.length).toBeGreaterThan(requestsWhileUp);
    // Delivery is at least once: report the duplicates rather than hide them.
    const duplicates = accepted.length - acceptedIds.size;
    console.log(`webhook fault test: ${links.length} links, ${seen.length} requests, ${FIRST_FAILURES} refused, ${accepted.length} accepted, ${duplicates} re-deliveries`);
  }, 240_000);
});
