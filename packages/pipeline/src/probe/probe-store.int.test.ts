import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createRedisConnection, closeRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { ProbeStore } from './probe-store.js';

const redis = createRedisConnection(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer');
const prefix = `{crawler_test_pipeline_probe_${process.pid}}`;

afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  await closeRedisConnection(redis);
});

describe('ProbeStore on real Redis', () => {
  it('round-trips a probe compressed, with an expiry', async () => {
    const store = new ProbeStore({ redis, prefix, maxCompressedBytes: 1 << 20, ttlMs: 60_000 });
    const html = `<html><body>${'<p>hello probe</p>'.repeat(2000)}</body></html>`;
    const body = new TextEncoder().encode(html);
    const key = await store.save('l1', { status: 200, headers: { server: 'nginx' }, finalUrl: 'http://a/', contentType: 'text/html', body, text: html });
    expect(key).toBe(`${prefix}:probe:l1`);
    const raw = await redis.getBuffer(key!);
    expect(raw!.length).toBeLessThan(body.length / 10);
    const ttl = await redis.pttl(key!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    const back = await store.load(key!);
    expect(back).toMatchObject({ status: 200, headers: { server: 'nginx' }, finalUrl: 'http://a/', contentType: 'text/html', text: html });
    expect(Buffer.from(back!.body).equals(Buffer.from(body))).toBe(true);
    await store.delete(key!);
    expect(await store.load(key!)).toBeNull();
  });

  it('keeps text decoded from another charset, and binary bodies without text', async () => {
    const store = new ProbeStore({ redis, prefix, maxCompressedBytes: 1 << 20, ttlMs: 60_000 });
    const latin1 = Uint8Array.from([0x63, 0x61, 0x66, 0xe9]);
    const k1 = await store.save('l2', { status: 200, headers: {}, finalUrl: 'http://a/', contentType: 'text/html', body: latin1, text: 'café' });
    expect((await store.load(k1!))?.text).toBe('café');
    const k2 = await store.save('l3', { status: 200, headers: {}, finalUrl: 'http://a/x.pdf', contentType: 'application/pdf', body: latin1, text: null });
    expect((await store.load(k2!))?.text).toBeNull();
  });

  it('keeps the exit the probe left through, by tier and id', async () => {
    const store = new ProbeStore({ redis, prefix, maxCompressedBytes: 1 << 20, ttlMs: 60_000 });
    const body = new TextEncoder().encode('<p>via a proxy</p>');
    const k1 = await store.save('l4', { status: 200, headers: {}, finalUrl: 'http://a/', contentType: 'text/html', body, text: '<p>via a proxy</p>', exit: { tier: 'residential', id: 'abc123' } });
    expect((await store.load(k1!))?.exit).toEqual({ tier: 'residential', id: 'abc123' });
    const k2 = await store.save('l5', { status: 200, headers: {}, finalUrl: 'http://a/', contentType: 'text/html', body, text: '<p>via a proxy</p>' });
    expect(await store.load(k2!)).not.toHaveProperty('exit');
  });

  it("keeps the charset the probe decoded its page with and the encoding a browser read the document in", async () => {
    const store = new ProbeStore({ redis, prefix, maxCompressedBytes: 1 << 20, ttlMs: 60_000 });
    const cp1251 = Uint8Array.from([0xcc, 0xee, 0xf1, 0xea, 0xe2, 0xe0]);
    const k1 = await store.save('l6', { status: 200, headers: {}, finalUrl: 'http://a/', contentType: 'text/html', body: cp1251, text: 'Москва', charset: 'windows-1251' });
    expect(await store.load(k1!)).toMatchObject({ text: 'Москва', charset: 'windows-1251' });
    const rendered = new TextEncoder().encode('<p>Москва</p>');
    const k2 = await store.save('l7', { status: 200, headers: {}, finalUrl: 'http://a/', contentType: 'text/html', body: rendered, text: '<p>Москва</p>', documentCharset: 'windows-1251' });
    const back = await store.load(k2!);
    expect(back).toMatchObject({ text: '<p>Москва</p>', documentCharset: 'windows-1251' });
    expect(back).not.toHaveProperty('charset');
  });

  it('refuses a probe whose compressed size is over the cap', async () => {
    const store = new ProbeStore({ redis, prefix, maxCompressedBytes: 10_000, ttlMs: 60_000 });
    const noise = new Uint8Array(randomBytes(50_000));
    expect(await store.save('big', { status: 200, headers: {}, finalUrl: 'http://a/', contentType: 'application/octet-stream', body: noise, text: null })).toBeNull();
    expect(await redis.exists(`${prefix}:probe:big`)).toBe(0);
  });

  it('keeps all probes together under the budget, and gives bytes back on delete and on expiry', async () => {
    const budgetPrefix = `${prefix}:budget`;
    let now = Date.now();
    const store = new ProbeStore({ redis, prefix: budgetPrefix, maxCompressedBytes: 1 << 20, ttlMs: 60_000, budgetBytes: 25_000, now: () => now });
    // Incompressible: each probe takes about 10 kB of Redis.
    const probe = () => ({ status: 200, headers: {}, finalUrl: 'http://a/', contentType: 'application/octet-stream', body: new Uint8Array(randomBytes(10_000)), text: null });
    const k1 = await store.save('b1', probe());
    const k2 = await store.save('b2', probe());
    expect(k1).not.toBeNull();
    expect(k2).not.toBeNull();
    expect(await store.save('b3', probe())).toBeNull();
    expect(await redis.exists(`${budgetPrefix}:probe:b3`)).toBe(0);
    expect(await store.usedBytes()).toBeGreaterThan(20_000);
    expect(await store.usedBytes()).toBeLessThanOrEqual(25_000);
    // Saving the same link again replaces its bytes instead of adding to them.
    expect(await store.save('b2', probe())).toBe(k2);
    await store.delete(k1!);
    expect(await store.save('b3', probe())).not.toBeNull();
    // Past their expiry, probes no longer count, even though nobody deleted them.
    now += 61_000;
    expect(await store.save('b4', probe())).not.toBeNull();
    expect(await store.save('b5', probe())).not.toBeNull();
    expect(await store.usedBytes()).toBeLessThanOrEqual(25_000);
  });
});
