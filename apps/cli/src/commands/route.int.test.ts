import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import type { CommandIO } from '../command.js';
import route from './route.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('cli_route');
});
afterAll(() => db?.drop());

async function run(args: string[]): Promise<{ code: number; out: string }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d) => (out += String(d)));
  const io: CommandIO = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env: { DATABASE_URL: db.url } };
  const code = await route.run(args, io);
  return { code, out };
}

describe('crawl route on the legacy table', () => {
  it('sets (alias stored canonical), lists, replaces and deletes routes', async () => {
    expect(await run(['set', 'Shop.Example', 'direct_access'])).toEqual({ code: 0, out: 'shop.example → simple_http\n' });
    expect((await run(['set', 'spa.example', 'playwright'])).code).toBe(0);
    expect((await run(['set', 'spa.example', 'playwright_stealth', '--json'])).out).toBe('{"domain":"spa.example","fetcher":"playwright_stealth"}\n');
    expect(await db.prisma.fetcherRoute.findMany({ select: { domain: true, fetcher: true }, orderBy: { domain: 'asc' } })).toEqual([
      { domain: 'shop.example', fetcher: 'simple_http' },
      { domain: 'spa.example', fetcher: 'playwright_stealth' },
    ]);
    const table = (await run(['list'])).out;
    expect(table).toMatch(/^domain\s+fetcher\n/);
    expect(table).toMatch(/shop\.example\s+simple_http\n/);
    expect(JSON.parse((await run(['list', '--json'])).out)).toHaveLength(2);
    expect(await run(['delete', 'shop.example'])).toEqual({ code: 0, out: 'deleted the route for shop.example\n' });
    expect(await run(['delete', 'shop.example'])).toEqual({ code: 1, out: 'no route for shop.example\n' });
    expect(await db.prisma.fetcherRoute.count()).toBe(1);
  });
});
