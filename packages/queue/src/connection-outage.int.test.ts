import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Redis } from 'ioredis';
import { createRedisConnection } from './connection.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A port nothing listens on (taken from the OS, then given back). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** A TCP relay on `port` to the real Redis: Redis "comes back" at an address the client was already retrying. */
async function relayTo(port: number): Promise<{ close(): Promise<void> }> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }) };
}

/** Resolves once the client has emitted `n` error events (each a failed connection attempt). */
function errorsSeen(client: Redis, n: number): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    client.on('error', () => {
      if (++seen === n) resolve();
    });
  });
}

const lines = () => {
  const warn = vi.fn();
  const info = vi.fn();
  return { logger: { warn, info }, warn, info };
};

let client: Redis | null = null;
afterEach(() => {
  client?.disconnect();
  client = null;
  vi.restoreAllMocks();
});

describe('a Redis that is not listening', () => {
  for (const db of [0, 11]) {
    it(`is one warning with its address per outage, not an ioredis stack per retry (database ${db})`, async () => {
      const port = await freePort();
      const stderr = vi.spyOn(console, 'error').mockImplementation(() => {});
      const log = lines();
      client = createRedisConnection(`redis://127.0.0.1:${port}/${db}`, 'worker', { retryStrategy: () => 20 }, { logger: log.logger });
      await errorsSeen(client, 5);
      expect(log.warn).toHaveBeenCalledTimes(1);
      expect(String(log.warn.mock.calls[0]!.at(-1))).toContain(`127.0.0.1:${port}`);
      expect(String(log.warn.mock.calls[0]!.at(-1))).toContain('ECONNREFUSED');
      expect(stderr).not.toHaveBeenCalled();
    });
  }

  it('is followed by one line when it is back', async () => {
    const port = await freePort();
    const log = lines();
    client = createRedisConnection(`redis://127.0.0.1:${port}/11`, 'worker', { retryStrategy: () => 20 }, { logger: log.logger });
    await errorsSeen(client, 3);
    const relay = await relayTo(port);
    try {
      await new Promise<void>((r) => client!.once('ready', () => r()));
      expect(await client.ping()).toBe('PONG');
      expect(log.warn.mock.calls.filter((c) => /unreachable/.test(String(c.at(-1))))).toHaveLength(1);
      const back = [...log.info.mock.calls, ...log.warn.mock.calls].map((c) => String(c.at(-1))).filter((m) => /redis back/.test(m));
      expect(back).toHaveLength(1);
      expect(back[0]).toContain(`127.0.0.1:${port}`);
    } finally {
      client.disconnect();
      await relay.close();
    }
  });

  it('is one warning for all of a process\'s connections to that address', async () => {
    const port = await freePort();
    const log = lines();
    client = createRedisConnection(`redis://127.0.0.1:${port}/11`, 'worker', { retryStrategy: () => 20 }, { logger: log.logger });
    const second = createRedisConnection(`redis://127.0.0.1:${port}/11`, 'worker', { retryStrategy: () => 20, enableAutoPipelining: true }, { logger: log.logger });
    try {
      await Promise.all([errorsSeen(client, 3), errorsSeen(second, 3)]);
      expect(log.warn).toHaveBeenCalledTimes(1);
    } finally {
      second.disconnect();
    }
  });

  it('without a logger, is one line on stderr per outage', async () => {
    const port = await freePort();
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => {});
    client = createRedisConnection(`redis://127.0.0.1:${port}`, 'producer', { retryStrategy: () => 20 });
    await errorsSeen(client, 5);
    expect(stderr).toHaveBeenCalledTimes(1);
    expect(String(stderr.mock.calls[0]![0])).toContain(`127.0.0.1:${port}`);
  });
});
