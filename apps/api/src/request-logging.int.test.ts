/**
 * What the API writes to its log per request at info: one line per request a client made, none for the probes and
 * scrapes that arrive every few seconds (a kubelet's /readyz, Prometheus' /metrics).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, deleteRedisPrefix, fetchQueueName } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { REDIS_URL } from '@crawler/testkit';
import { createServer } from './server.js';

const PREFIX = `{crawler_test_api_reqlog_${process.pid}}`;
const QUEUE_NAMES = [ROUTE_QUEUE, fetchQueueName('simple_http')];
const API_KEY = 'request-logging-test-key-0123456789abcdef';

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  db = await createTestDatabase('api_reqlog');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  app = await createServer({
    prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(),
    bullBoard: null, apiKeys: [API_KEY], loggerInstance: pino({ level: 'info' }, sink),
  });
});

afterAll(async () => {
  await app?.close();
  await queues?.obliterate(QUEUE_NAMES).catch(() => undefined);
  await queues?.close();
  await deleteRedisPrefix(redis, PREFIX);
  redis?.disconnect();
  await db?.drop();
});

describe('request logging', () => {
  it('logs one line per client request at info, with method, path, status and time; probes and scrapes only at debug', async () => {
    const auth = { authorization: `Bearer ${API_KEY}` };
    for (const url of ['/healthz', '/readyz']) expect((await app.inject({ method: 'GET', url })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/metrics', headers: auth })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/links', headers: auth, payload: { urls: ['https://a.example/x'] } })).statusCode).toBe(202);
    expect((await app.inject({ method: 'GET', url: '/links?limit=1' })).statusCode).toBe(401);

    const requestLines = lines.filter((l) => l.level === 30 && JSON.stringify(l).includes('"url":"/'));
    expect(requestLines.map((l) => l.msg)).toEqual(['request', 'request']);
    expect(requestLines.map((l) => [(l.req as { method: string }).method, (l.req as { url: string }).url, l.statusCode])).toEqual([
      ['POST', '/links', 202],
      ['GET', '/links?limit=1', 401],
    ]);
    for (const l of requestLines) expect(typeof l.responseTimeMs).toBe('number');
    expect(JSON.stringify(lines)).not.toContain(API_KEY);
  });
});
