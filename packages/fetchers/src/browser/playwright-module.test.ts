import { describe, expect, it, vi } from 'vitest';

// Records which heavy browser libraries get imported: a plain-HTTP process must import none of them.
const imported: string[] = [];
vi.mock('playwright-core', () => {
  imported.push('playwright-core');
  return { chromium: {}, errors: { TimeoutError: class TimeoutError extends Error {} } };
});
vi.mock('fingerprint-generator', () => {
  imported.push('fingerprint-generator');
  return {};
});
vi.mock('fingerprint-injector', () => {
  imported.push('fingerprint-injector');
  return {};
});

describe('browser libraries load on first use', () => {
  it('are not imported by the package, its registry or an HTTP fetch setup', async () => {
    const fetchers = await import('../index.js');
    const registry = fetchers.createDefaultRegistry({ allowPrivateNetworks: true });
    registry.get('simple_http');
    // Creating the browser fetchers does not launch (and so does not import) anything either.
    registry.get('playwright');
    registry.get('playwright_stealth');
    expect(imported).toEqual([]);
    await registry.closeAll();
  });

  it('imports playwright-core once, and only then knows its error classes', async () => {
    const { loadPlaywright, loadedPlaywright } = await import('./playwright-module.js');
    expect(loadedPlaywright()).toBeNull();
    const [a, b] = await Promise.all([loadPlaywright(), loadPlaywright()]);
    expect(a).toBe(b);
    expect(loadedPlaywright()).toBe(a);
    expect(imported).toEqual(['playwright-core']);
  });
});
