/** The sim web seen by the crawler's real browser fetchers: client classes by headers, render and gate beacons. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDefaultRegistry } from '@crawler/fetchers';
import { startSimWeb, type SimWeb } from './sim-web.js';

const registry = createDefaultRegistry({ allowPrivateNetworks: true, chromiumPath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
let web: SimWeb;

beforeAll(async () => {
  web = await startSimWeb({ sites: [{ kind: 'static' }, { kind: 'spa' }, { kind: 'botwall' }], firstHost: '127.0.4.10' });
});
afterAll(async () => {
  await registry.closeAll();
  await web.close();
});

const fetchWith = (name: string, url: string) => registry.get(name).fetch({ url, timeoutMs: 20_000, maxBytes: 1 << 22 });

describe('sim web and real browsers', () => {
  it('counts a browser as a browser and an SPA rendered by it as served', async () => {
    const [, spa] = web.sites;
    const res = await fetchWith('playwright', spa!.urls(1)[0]!);
    expect(res.text).toContain('data-rendered="true"');
    await new Promise((r) => setTimeout(r, 200));
    expect(spa!.stats()).toMatchObject({ requests: { plain: 0, browser: 1 }, served: 1, blocked: 0 });
  }, 60_000);

  it('the bot wall stops plain playwright and lets the stealth browser through', async () => {
    const [, , wall] = web.sites;
    const [u1, u2] = wall!.urls(2);
    const plainBrowser = await fetchWith('playwright', u1!);
    expect(plainBrowser.text).toContain('challenge-platform');
    const stealth = await fetchWith('playwright_stealth', u2!);
    expect(stealth.text).toContain('botwall-2 page 1');
    expect(stealth.text).not.toContain('challenge-platform');
    await new Promise((r) => setTimeout(r, 200));
    expect(wall!.requestLog().map((r) => [r.client, r.outcome])).toEqual([
      ['browser', 'challenge'],
      ['browser', 'served'],
    ]);
    expect(wall!.stats()).toMatchObject({ blocked: 1, served: 1 });
  }, 60_000);
});
