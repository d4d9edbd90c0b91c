import type { Redis } from 'ioredis';
import { BoundedMap, applySetCookie, cookieHeaderOf, parseJar, type Clock, type CookieJar, type Logger } from '@crawler/core';
import { proxyId } from './exit-pool.js';

/** Where session jars live: one Redis key per (exit session, site), under the queue prefix. */
export interface SessionJarsShared {
  redis: Pick<Redis, 'get' | 'set' | 'del'>;
  prefix: string;
}

/** Jars this worker keeps (the most recently used): one per site and exit session it met, not one per site ever met. */
export const LOCAL_JARS_KEPT = 10_000;

/**
 * Plain HTTP's cookie jars per exit session and site, shared by the fleet through Redis: what a site set through one
 * identity goes back only through that identity, from whichever worker. Without Redis, a jar is this worker's. A
 * Redis error costs the cookies of one request, never the request.
 */
export class SessionJars {
  readonly #local = new BoundedMap<string, CookieJar>(LOCAL_JARS_KEPT);

  constructor(private readonly opts: { clock: Clock; shared?: SessionJarsShared; logger?: Logger; ttlMs?: number }) {}

  /**
   * The Cookie header for `site` through the session `proxyUrl` (the URL as used: a sticky URL with its id), for a
   * request to `url` (its `Secure` cookies only over https).
   */
  async cookieHeader(site: string, proxyUrl: string, url: string): Promise<string | undefined> {
    return cookieHeaderOf(await this.#load(site, proxyUrl), this.opts.clock.now().getTime(), url.startsWith('https:'));
  }

  /** Keep what a response from `url` (the final one) through the session set (its Set-Cookie lines, "\n"-joined). */
  async remember(site: string, proxyUrl: string, setCookie: string | undefined, url: string): Promise<void> {
    if (!setCookie) return;
    const jar = applySetCookie(await this.#load(site, proxyUrl), setCookie, this.opts.clock.now().getTime(), url.startsWith('https:'));
    const key = this.#key(site, proxyUrl);
    this.#local.set(key, jar);
    const shared = this.opts.shared;
    if (!shared) return;
    try {
      await shared.redis.set(key, JSON.stringify(jar), 'PX', this.opts.ttlMs ?? 24 * 3_600_000);
    } catch (err) {
      this.opts.logger?.warn({ err, site }, 'could not share a session cookie jar');
    }
  }

  /** The session was retired for the site: its cookies go with it. */
  async forget(site: string, proxyUrl: string): Promise<void> {
    const key = this.#key(site, proxyUrl);
    this.#local.delete(key);
    await this.opts.shared?.redis.del(key).catch(() => undefined);
  }

  async #load(site: string, proxyUrl: string): Promise<CookieJar> {
    const key = this.#key(site, proxyUrl);
    const shared = this.opts.shared;
    if (shared) {
      try {
        return parseJar(await shared.redis.get(key));
      } catch (err) {
        this.opts.logger?.warn({ err, site }, "could not read a session's cookie jar; using this worker's own");
      }
    }
    return this.#local.get(key) ?? {};
  }

  #key(site: string, proxyUrl: string): string {
    return `${this.opts.shared?.prefix ?? 'local'}:jar:${proxyId(proxyUrl)}:${site}`;
  }
}
