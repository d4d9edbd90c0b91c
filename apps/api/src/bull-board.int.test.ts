/**
 * Bull Board as an operator sees it: headless Chromium, basic auth through the browser's credentials, queues with
 * jobs in several states. Set SCREENSHOT_PATH to keep a screenshot of the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, fetchQueueName, deleteRedisPrefix } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { createServer } from './server.js';
import { REDIS_URL } from '@crawler/testkit';

const PREFIX = `{crawler_test_api_board_${process.pid}}`;
const QUEUE_NAMES = [ROUTE_QUEUE, fetchQueueName('simple_http'), fetchQueueName('playwright'), fetchQueueName('playwright_stealth')];
const AUTH = { user: 'ops', password: 'board-test-secret' };
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage', '--disable-quic', '--disable-sync'];

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;
let browser: Browser;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase('api_board');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  app = await createServer({ prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: AUTH, apiKeys: null });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  // Jobs in the states an operator looks for: waiting links, a paused link's delayed re-route, browser work queued.
  const res = await app.inject({ method: 'POST', url: '/links', payload: { urls: Array.from({ length: 7 }, (_, i) => `https://news.example/story-${i}`) } });
  expect(res.statusCode).toBe(202);
  await queues.enqueueRoute({ linkId: '00000000-0000-4000-8000-0000000000aa', url: 'https://shop.example/blocked', generation: 1, reason: 'resume' }, { delayMs: 600_000 });
  await queues.enqueueFetch({ linkId: '00000000-0000-4000-8000-0000000000bb', url: 'https://app.example/#/home', fetcher: 'playwright', selectionSource: 'probe', generation: 0, attemptsBefore: 0 });
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ARGS });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await queues?.obliterate(QUEUE_NAMES).catch(() => undefined);
  await queues?.close();
  if (redis) {
    await deleteRedisPrefix(redis, PREFIX);
    redis.disconnect();
  }
  await db?.drop();
});

describe('Bull Board in a browser', () => {
  it('refuses a browser without credentials or with wrong ones', async () => {
    for (const httpCredentials of [undefined, { username: AUTH.user, password: 'guessed-password' }]) {
      const context = await browser.newContext({ httpCredentials });
      try {
        // Headless Chromium has no login dialog: a 401 either ends the navigation with an auth error (no
        // credentials to offer) or is shown as the 401 page (credentials offered and refused).
        const page = await context.newPage();
        const outcome = await page.goto(`${base}/admin/queues`).then((r) => String(r?.status()), (err: Error) => err.message);
        expect(outcome).toMatch(/^401$|ERR_INVALID_AUTH_CREDENTIALS/);
        expect(await page.getByText('fetch-simple_http').count()).toBe(0);
        expect((await context.request.get(`${base}/admin/queues/api/queues`)).status()).toBe(401);
      } finally {
        await context.close();
      }
    }
  });

  it('shows every crawler queue and its jobs to a browser with credentials', async () => {
    const context = await browser.newContext({ httpCredentials: { username: AUTH.user, password: AUTH.password }, viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      const res = await page.goto(`${base}/admin/queues`);
      expect(res?.status()).toBe(200);
      // The board is a client-side app: wait until it has fetched and rendered the queues.
      for (const name of QUEUE_NAMES) await page.getByText(name, { exact: true }).first().waitFor({ timeout: 15_000 });
      await expect(page.title()).resolves.toMatch(/Crawler queues/);
      // The sidebar renders before the overview's queue cards have loaded their counts.
      await page.getByText('Loading...').first().waitFor({ state: 'detached', timeout: 15_000 }).catch(() => undefined);
      if (process.env.SCREENSHOT_PATH) await page.screenshot({ path: process.env.SCREENSHOT_PATH, fullPage: true });

      await page.getByText(ROUTE_QUEUE, { exact: true }).first().click();
      await page.getByText('https://news.example/story-0').first().waitFor({ timeout: 15_000 }).catch(() => undefined);
      const body = await page.locator('body').innerText();
      expect(body).toMatch(/story-\d/);
      if (process.env.SCREENSHOT_PATH) await page.screenshot({ path: process.env.SCREENSHOT_PATH.replace(/\.png$/, '-route.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('shows translated labels, not raw keys, in English and German, and asks nothing of any host but the API', async () => {
    for (const locale of ['en-US', 'de-DE']) {
      const context = await browser.newContext({ httpCredentials: { username: AUTH.user, password: AUTH.password }, viewport: { width: 1280, height: 900 }, locale });
      try {
        const page = await context.newPage();
        const requested: string[] = [];
        const missing: string[] = [];
        page.on('request', (r) => requested.push(r.url()));
        page.on('response', (r) => {
          if (r.status() >= 400) missing.push(`${r.status()} ${r.url()}`);
        });
        expect((await page.goto(`${base}/admin/queues`))?.status()).toBe(200);
        // The placeholder is MENU.SEARCH_INPUT_PLACEHOLDER translated: it appears only once the locale file loaded.
        await page.getByPlaceholder(locale === 'en-US' ? 'Filter queues' : 'Warteschlangen filtern').waitFor({ timeout: 15_000 });
        // MENU.QUEUES, the sidebar's heading, translated.
        await page.getByText(locale === 'en-US' ? 'QUEUES' : 'WARTESCHLANGEN', { exact: true }).first().waitFor({ timeout: 15_000 });
        await page.getByText(ROUTE_QUEUE, { exact: true }).first().waitFor({ timeout: 15_000 });
        const body = await page.locator('body').innerText();
        expect(body, locale).not.toMatch(/\b(MENU|DASHBOARD|QUEUE|JOB|STATUS)\.[A-Z_]+/);
        expect(missing, locale).toEqual([]);
        expect(requested.some((u) => u.includes(`/admin/queues/static/locales/${locale}/messages.json`)), locale).toBe(true);
        // No web fonts (or anything else) from the internet: every request stays on the API's loopback origin.
        expect(requested.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith('data:')), locale).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });
});
