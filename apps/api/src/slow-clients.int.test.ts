/**
 * Slow clients (slow-loris): a request whose headers or body never finish must not hold a connection forever. Raw
 * sockets against the API listening on a port, with short timeouts so the test waits for the server, not a clock.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, closeRedisConnection, createRedisConnection } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { REDIS_URL } from '@crawler/testkit';
import { parseApiEnv } from './env.js';
import { createServer } from './server.js';

const PREFIX = `{crawler_test_api_slow_${process.pid}}`;

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  db = await createTestDatabase('api_slow_clients');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  app = await createServer({
    prisma: db.prisma,
    redis,
    queues,
    links: new LinkStore(db.prisma),
    queueNames: [ROUTE_QUEUE],
    metrics: createPipelineMetrics(),
    bullBoard: null,
    apiKeys: null,
    timeouts: { requestTimeoutMs: 400, headersTimeoutMs: 200, idleTimeoutMs: 60_000 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await queues?.close();
  if (redis) await closeRedisConnection(redis);
  await db?.drop();
});

/** Open a raw connection; `ended` resolves with everything the server sent once it closes the socket. */
function open(): { socket: Socket; ended: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d) => (received += d.toString('latin1')));
  socket.on('error', () => undefined);
  const ended = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  return { socket, ended };
}

describe('slow clients', () => {
  it('answers a request sent at once (the short timeouts do not cut off ordinary clients)', async () => {
    const { socket, ended } = open();
    socket.write('GET /healthz HTTP/1.1\r\nHost: api\r\nConnection: close\r\n\r\n');
    const answer = await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('"status":"ok"');
  });

  it('cuts off a body that never ends with a 408 and closes the connection', async () => {
    const { socket, ended } = open();
    socket.write('POST /links HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"urls": [');
    const answer = await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(socket.destroyed).toBe(true);
  }, 20_000);

  it('cuts off headers sent a byte at a time', async () => {
    const { socket, ended } = open();
    const head = `GET /healthz HTTP/1.1\r\nHost: api\r\nX-Slow: ${'a'.repeat(100_000)}`;
    let i = 0;
    const drip = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(head[i++ % head.length]!);
    }, 20);
    try {
      const answer = await ended;
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      // The drip was still going when the server gave up: the headers never finished.
      expect(i).toBeLessThan(head.length);
    } finally {
      clearInterval(drip);
    }
  }, 20_000);

  it('closes a connection that never sends a byte', async () => {
    const { ended } = open();
    expect(await ended).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);
});

describe('API timeouts from the environment', () => {
  const BASE = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x' };
  it('defaults to 10 s for headers, 30 s for the whole request and 60 s of silence, each configurable', () => {
    expect(parseApiEnv(BASE).timeouts).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, idleTimeoutMs: 60_000 });
    expect(parseApiEnv({ ...BASE, API_HEADERS_TIMEOUT_MS: '5000', API_REQUEST_TIMEOUT_MS: '120000', API_IDLE_TIMEOUT_MS: '90000' }).timeouts).toEqual({
      headersTimeoutMs: 5_000,
      requestTimeoutMs: 120_000,
      idleTimeoutMs: 90_000,
    });
  });

  it('refuses a headers timeout longer than the request timeout, and 0 (no limit)', () => {
    expect(() => parseApiEnv({ ...BASE, API_HEADERS_TIMEOUT_MS: '60000', API_REQUEST_TIMEOUT_MS: '30000' })).toThrow(
      /API_HEADERS_TIMEOUT_MS="60000": must be at most API_REQUEST_TIMEOUT_MS \(30000\)/,
    );
    expect(() => parseApiEnv({ ...BASE, API_REQUEST_TIMEOUT_MS: '0' })).toThrow(/API_REQUEST_TIMEOUT_MS="0": expected an integer from 1 to/);
  });
});
