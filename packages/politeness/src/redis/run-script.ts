import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A Lua script with its SHA1 computed once, so calls send the hash instead of the source. */
export interface LuaScript {
  readonly source: string;
  readonly sha1: string;
  readonly numberOfKeys: number;
}

/** Wrap Lua source for {@link runScript}. */
export function defineScript(source: string, numberOfKeys: number): LuaScript {
  return { source, numberOfKeys, sha1: createHash('sha1').update(source).digest('hex') };
}

/**
 * Run a script by SHA and fall back to sending its source when the server has not seen it (first call, or after
 * a restart / SCRIPT FLUSH). Done by hand instead of `redis.defineCommand` so a client handed in by the app is not
 * mutated and stays typed.
 */
export async function runScript(redis: Redis, script: LuaScript, keys: string[], args: Array<string | number>): Promise<unknown> {
  if (keys.length !== script.numberOfKeys) throw new TypeError(`script expects ${script.numberOfKeys} keys, got ${keys.length}`);
  try {
    return await redis.evalsha(script.sha1, keys.length, ...keys, ...args);
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('NOSCRIPT')) {
      return await redis.eval(script.source, keys.length, ...keys, ...args);
    }
    throw err;
  }
}

/** Make sure every key lands in one hash slot (Redis Cluster): wrap the prefix in `{}` unless it already has a tag. */
export function hashTaggedPrefix(prefix: string): string {
  if (/\{[^{}]+\}/.test(prefix)) return prefix;
  const bare = prefix.replace(/:+$/, '');
  if (bare === '') throw new TypeError('politeness key prefix must not be empty');
  return `{${bare}}:`;
}
