/** The outbox trigger and the dispatcher against real Postgres and Redis, with a loopback webhook receiver. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ManualClock, silentLogger } from '@crawler/core';
import { OutboxStore, sqlOf } from '@crawler/db';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { EventDispatcher, type EventDispatcherOptions } from './dispatcher.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, verifyWebhook } from './signature.js';
import { REDIS_URL } from '@crawler/testkit';

const STREAM = `{crawler_test_events_${process.pid}}:events`;
const SECRET = 'test-secret-0123456789';

let db: TestDatabase;
let redis: Redis;
let receiver: Server;
let receiverUrl: string;
/** What the receiver answers next; each request shifts one status (200 once empty). */
let answers: number[] = [];
const received: Array<{ id: string; body: string; verified: boolean; status: number }> = [];

beforeAll(async () => {
  db = await createTestDatabase('events');
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const status = answers.shift() ?? 200;
      // Tests move a manual clock by hours: the timestamp's age is not what is checked here.
      received.push({
        id: String(req.headers[EVENT_ID_HEADER]),
        body,
        verified: verifyWebhook(SECRET, body, req.headers[SIGNATURE_HEADER] as string, { toleranceSeconds: Number.POSITIVE_INFINITY }),
        status,
      });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await new Promise((r) => receiver?.close(r));
  await redis?.del(STREAM).catch(() => 0);
  redis?.disconnect();
  await db?.drop();
});

beforeEach(async () => {
  await sqlOf(db.prisma).query('TRUNCATE link_events, links CASCADE');
  received.length = 0;
  answers = [];
  await redis.del(STREAM);
});

const sql = () => sqlOf(db.prisma);

async function insertLinks(n: number, prefix = 'a'): Promise<string[]> {
  const rows = await sql().query<{ id: string }>(
    "INSERT INTO links (url, initial_url, domain) SELECT 'https://ev.example/' || $2::text || i, 'https://ev.example/' || $2::text || i, 'ev.example' FROM generate_series(1, $1::int) i RETURNING id::text",
    [n, prefix],
  );
  return rows.map((r) => r.id);
}

function dispatcher(clock: ManualClock, extra: Partial<EventDispatcherOptions> = {}): EventDispatcher {
  return new EventDispatcher({
    outbox: new OutboxStore({ prisma: db.prisma, clock }),
    webhook: { url: receiverUrl, secret: SECRET, timeoutMs: 5_000 },
    stream: null,
    logger: silentLogger,
    clock,
    ...extra,
  });
}

describe('the outbox trigger', () => {
  it('writes one event when a link reaches done or failed, in the same transaction', async () => {
    const [a, b, c] = await insertLinks(3);
    await sql().query("UPDATE links SET status = 'fetching' WHERE id = $1::uuid", [a]);
    await sql().query("UPDATE links SET status = 'done', fetcher = 'simple_http' WHERE id = $1::uuid", [a]);
    // done → done (a duplicate job storing the page again) is not a second event.
    await sql().query("UPDATE links SET status = 'done' WHERE id = $1::uuid", [a]);
    await sql().query("UPDATE links SET status = 'failed', fetcher = 'playwright', last_error_type = 'blocked_captcha', last_error = $2 WHERE id = $1::uuid", [b, `max_attempts:blocked_captcha:cloudflare ${'x'.repeat(1000)}`]);
    await sql().query("UPDATE links SET status = 'paused' WHERE id = $1::uuid", [c]);
    // A transaction that rolls back leaves no event behind.
    await db.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("UPDATE links SET status = 'done' WHERE id = $1::uuid", c);
      throw new Error('rollback');
    }).catch(() => undefined);
    const store = new OutboxStore({ prisma: db.prisma });
    expect(await store.forLink(a!)).toMatchObject([{ type: 'link.done', status: 'done', fetcher: 'simple_http', errorType: null, url: 'https://ev.example/a1' }]);
    expect(await store.forLink(b!)).toMatchObject([{ type: 'link.failed', status: 'failed', fetcher: 'playwright', errorType: 'blocked_captcha', error: expect.stringMatching(/^max_attempts:blocked_captcha:cloudflare x+$/) }]);
    expect((await store.forLink(b!))[0]!.error).toHaveLength(600);
    expect(await store.forLink(a!)).not.toMatchObject([{ error: expect.anything() }]);
    expect(await store.forLink(c!)).toEqual([]);
  });
});

describe('EventDispatcher', () => {
  it('delivers signed webhooks once each', async () => {
    const ids = await insertLinks(5);
    await sql().query("UPDATE links SET status = 'done' WHERE id = ANY($1::uuid[])", [ids]);
    const clock = new ManualClock();
    const r = await dispatcher(clock).runOnce();
    expect(r).toMatchObject({ delivered: 5, failed: 0 });
    expect(received).toHaveLength(5);
    expect(received.every((x) => x.verified)).toBe(true);
    const bodies = received.map((x) => JSON.parse(x.body) as { id: string; linkId: string; type: string; seq: string; occurredAt: string });
    expect(new Set(bodies.map((b) => b.linkId))).toEqual(new Set(ids));
    for (const [i, b] of bodies.entries()) {
      expect(b.id).toBe(received[i]!.id);
      expect(Object.keys(b)).toEqual(['id', 'type', 'linkId', 'url', 'status', 'fetcher', 'errorType', 'occurredAt', 'seq']);
    }
    expect(await dispatcher(clock).runOnce()).toMatchObject({ delivered: 0 });
  });

  it('retries a failing receiver with backoff, then dead-letters after the window, and replay re-sends', async () => {
    const [id] = await insertLinks(1);
    await sql().query("UPDATE links SET status = 'failed', last_error_type = 'timeout' WHERE id = $1::uuid", [id]);
    const clock = new ManualClock(Date.now() + 1_000);
    const d = dispatcher(clock, { retry: { baseDelayMs: 1_000, maxDelayMs: 60_000, retryWindowMs: 3_600_000 } });
    answers = Array.from({ length: 1_000 }, () => 500);
    expect(await d.runOnce()).toMatchObject({ failed: 1 });
    // Not due yet: nothing is sent.
    expect(await d.runOnce()).toMatchObject({ failed: 0, delivered: 0 });
    expect(received).toHaveLength(1);
    let rounds = 0;
    for (let dead = 0; dead === 0; rounds++) {
      clock.advance(61_000);
      dead = (await d.runOnce()).dead;
    }
    // An hour of retries at most a minute apart, each one signed and carrying the same event id.
    expect(rounds).toBeGreaterThan(50);
    expect(new Set(received.map((x) => x.id)).size).toBe(1);
    expect(received.every((x) => x.verified)).toBe(true);
    const [row] = await sql().query<{ dead: boolean; attempts: number; last_error: string }>('SELECT dead_at IS NOT NULL AS dead, webhook_attempts AS attempts, last_error FROM link_events');
    expect(row).toMatchObject({ dead: true, last_error: 'receiver answered 500' });
    expect(row!.attempts).toBe(received.length);
    // Dead letters stay put until replayed.
    clock.advance(3_600_000);
    expect(await d.runOnce()).toMatchObject({ delivered: 0, failed: 0, dead: 0 });
    answers = [];
    expect(await new OutboxStore({ prisma: db.prisma, clock }).replayDead()).toBe(1);
    expect(await d.runOnce()).toMatchObject({ delivered: 1 });
    expect(received.at(-1)!.status).toBe(200);
  });

  it('treats an unreachable receiver and a redirect as failures', async () => {
    const [id] = await insertLinks(1);
    await sql().query("UPDATE links SET status = 'done' WHERE id = $1::uuid", [id]);
    const clock = new ManualClock();
    const nowhere = dispatcher(clock, { webhook: { url: 'http://127.0.0.1:9/hook', secret: SECRET, timeoutMs: 2_000 } });
    expect(await nowhere.runOnce()).toMatchObject({ failed: 1 });
    clock.advance(10_000);
    answers = [302];
    expect(await dispatcher(clock).runOnce()).toMatchObject({ failed: 1 });
    const [row] = await sql().query<{ last_error: string }>('SELECT last_error FROM link_events');
    expect(row!.last_error).toBe('receiver answered 302');
  });

  it('several dispatchers never deliver one event twice at once', async () => {
    const ids = await insertLinks(300, 'c');
    await sql().query("UPDATE links SET status = 'done' WHERE id = ANY($1::uuid[])", [ids]);
    const clock = new ManualClock();
    const fleet = [1, 2, 3, 4].map(() => dispatcher(clock, { batchSize: 20 }));
    for (let round = 0; round < 30; round++) {
      const results = await Promise.all(fleet.map((d) => d.runOnce()));
      if (results.every((r) => r.delivered === 0)) break;
    }
    expect(received).toHaveLength(300);
    expect(new Set(received.map((x) => x.id)).size).toBe(300);
  });

  it('adds events to a Redis stream for pull consumers', async () => {
    const ids = await insertLinks(3, 's');
    await sql().query("UPDATE links SET status = 'done' WHERE id = ANY($1::uuid[])", [ids]);
    const clock = new ManualClock();
    const d = dispatcher(clock, { webhook: null, stream: { redis, key: STREAM } });
    expect(await d.runOnce()).toMatchObject({ streamed: 3, delivered: 0 });
    expect(await d.runOnce()).toMatchObject({ streamed: 0 });
    const entries = await redis.xrange(STREAM, '-', '+');
    expect(entries).toHaveLength(3);
    const events = entries.map(([, fields]) => JSON.parse(fields[fields.indexOf('event') + 1]!) as { linkId: string; type: string });
    expect(new Set(events.map((e) => e.linkId))).toEqual(new Set(ids));
    expect(events.every((e) => e.type === 'link.done')).toBe(true);
    // Webhooks were not asked for: those events still wait for a webhook dispatcher.
    expect((await new OutboxStore({ prisma: db.prisma }).stats()).pending).toBe(3);
  });

  it('prune deletes old events every channel in use is done with, in batches, and keeps the rest', async () => {
    const ids = await insertLinks(7, 'p');
    await sql().query("UPDATE links SET status = 'done' WHERE id = ANY($1::uuid[])", [ids]);
    const outbox = new OutboxStore({ prisma: db.prisma });
    const [delivered, dead, streamedOnly, untouched, deliveredAndStreamed, recent, pending] = ids;
    const byLink = async (link: string) => (await outbox.forLink(link))[0]!.id;
    await outbox.markDelivered(await byLink(delivered!));
    await outbox.markFailed(await byLink(dead!), 'gone', { dead: true });
    await outbox.markStreamed([await byLink(streamedOnly!), await byLink(deliveredAndStreamed!), await byLink(dead!)]);
    await outbox.markDelivered(await byLink(deliveredAndStreamed!));
    await outbox.markDelivered(await byLink(recent!));
    // Everything but `recent` occurred 10 days ago.
    await sql().query("UPDATE link_events SET occurred_at = now() - interval '10 days' WHERE link <> $1::uuid", [recent]);
    const before = new Date(Date.now() - 7 * 86_400_000);
    const left = async () => new Set((await sql().query<{ link: string }>('SELECT link::text FROM link_events')).map((r) => r.link));

    // Webhook and stream both in use: only events settled on both go.
    expect(await outbox.prune({ before, webhook: true, stream: true, batchSize: 1 })).toBe(2);
    expect(await left()).toEqual(new Set([delivered, streamedOnly, untouched, recent, pending]));
    // Webhook only: delivered or dead is enough.
    expect(await outbox.prune({ before, webhook: true, stream: false })).toBe(1);
    expect(await left()).toEqual(new Set([streamedOnly, untouched, recent, pending]));
    // Stream only: added to the stream is enough.
    expect(await outbox.prune({ before, webhook: false, stream: true })).toBe(1);
    // No channel at all: nobody will ever read the old ones; recent events stay whatever their state.
    expect(await outbox.prune({ before, webhook: false, stream: false, batchSize: 1 })).toBe(2);
    expect(await left()).toEqual(new Set([recent]));
  });
});
