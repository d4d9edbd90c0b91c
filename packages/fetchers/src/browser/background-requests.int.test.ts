import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '@crawler/core';
import {
  BACKGROUND_VARIANTS,
  HOSTILE_RENDERED_TEXT,
  hostileRoutes,
  sleep,
  startPrivateTarget,
  startTestServer,
  type PrivateTarget,
  type TestServer,
} from '@crawler/testkit';
import { createDefaultRegistry, type FetcherRegistry } from '../registry.js';
import { FetchError } from '../errors.js';

interface Line {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

/** A logger that keeps every line with its bindings, so a test can ask what was logged at which level. */
function recordingLogger(lines: Line[], bindings: Record<string, unknown> = {}): Logger {
  const at = (level: Line['level']) => (a: object | string, b?: string) =>
    typeof a === 'string' ? lines.push({ level, obj: { ...bindings }, msg: a }) : lines.push({ level, obj: { ...bindings, ...a }, msg: b ?? '' });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (b) => recordingLogger(lines, { ...bindings, ...b }) };
}

/**
 * The guard on (only the page's host allowed, no private networks): whatever a page tries in the background into
 * private space is refused and logged, and the page the crawler navigated to is still `done` with what it rendered.
 */
describe('a hostile page cannot fail its own fetch', () => {
  let inner: PrivateTarget;
  let site: TestServer;
  let registry: FetcherRegistry;
  const lines: Line[] = [];

  beforeAll(async () => {
    // 127.0.0.9: the internal network, NOT allowed; 127.0.0.2: the stand-in for the public site, allowed.
    inner = await startPrivateTarget('127.0.0.9');
    site = await startTestServer(hostileRoutes(inner.origin), { host: '127.0.0.2' });
    // Resources not blocked: images and fonts go to the network too, the harsher case.
    registry = createDefaultRegistry({ allowHosts: ['127.0.0.2'], logger: recordingLogger(lines), browser: { maxPages: 2, blockResources: false, challengeWaitMs: 0 } });
  });

  afterAll(async () => {
    await registry.closeAll();
    await site.close();
    await inner.close();
  });

  for (const name of ['playwright', 'playwright_stealth']) {
    it.each(BACKGROUND_VARIANTS)(`${name}: %s into private space is refused, logged, and the page is done`, async (variant) => {
      inner.reset();
      lines.length = 0;
      const url = site.url(`/hostile/${variant}`);
      const result = await registry.get(name).fetch({ url });
      expect(result.status).toBe(200);
      expect(result.text).toContain(HOSTILE_RENDERED_TEXT);
      expect(result.text).toContain(`data-variant="${variant}"`);
      expect(result.finalUrl).toBe(url);
      // Popups and downloads would go on after the fetch returned: give them the time to.
      await sleep(300);
      expect(inner.requests).toEqual([]);
      expect(inner.connections).toBe(0);
      const warned = lines.filter((l) => l.level === 'warn' && l.obj['pageUrl'] === url);
      if (variant === 'window-open') {
        // Chromium's popup blocker stops a popup the user did not ask for before it makes any request: nothing reached
        // the egress proxy, so nothing was refused (the pool closes any popup that gets past the blocker).
        expect(lines.filter((l) => /refused/.test(l.msg))).toEqual([]);
      } else {
        // The page's warn (with its URL) comes from the page's requestfailed event. A fetch() the page fires after it
        // rendered may reach the egress proxy only as the page closes, after the fetch returned: the proxy's own
        // refusal line is then the record of it.
        const refusedAtEgress = lines.filter((l) => /egress refused/.test(l.msg) && String(l.obj['target']).startsWith('127.0.0.9'));
        expect(warned.length + refusedAtEgress.length, JSON.stringify(lines)).toBeGreaterThan(0);
        expect(warned.every((l) => typeof l.obj['target'] === 'string' && String(l.obj['target']).includes('127.0.0.')), JSON.stringify(warned)).toBe(true);
      }
      expect(JSON.stringify(warned)).not.toContain('internal secret');
    }, 30_000);
  }

  it.each(['playwright', 'playwright_stealth'])('%s: the main navigation redirected into private space still fails the link', async (name) => {
    inner.reset();
    const err = (await registry.get(name).fetch({ url: site.url('/main-302') }).catch((e: unknown) => e)) as FetchError;
    expect(err).toBeInstanceOf(FetchError);
    expect(err.code).toBe('blocked_address');
    expect(inner.connections).toBe(0);
  }, 30_000);
});
