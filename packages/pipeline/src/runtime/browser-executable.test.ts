import { describe, expect, it } from 'vitest';
import { ConfigError } from '@crawler/core';
import { assertBrowserExecutable } from './browser-executable.js';

describe('assertBrowserExecutable', () => {
  it('refuses a Chromium that cannot be launched when a browser fetcher is served, naming CHROMIUM_PATH and the fetchers', () => {
    const check = (fetchers: string[]) => () => assertBrowserExecutable('/nonexistent/chromium', fetchers);
    expect(check(['simple_http', 'playwright', 'playwright_stealth'])).toThrow(ConfigError);
    expect(check(['simple_http', 'playwright', 'playwright_stealth'])).toThrow(
      /^invalid configuration: CHROMIUM_PATH="\/nonexistent\/chromium": no such file; the browser fetchers this process serves \(playwright, playwright_stealth\)/,
    );
    // A router, or a plain-HTTP fetcher, launches no browser.
    expect(check(['simple_http'])).not.toThrow();
    expect(check([])).not.toThrow();
    expect(() => assertBrowserExecutable(process.execPath, ['playwright'])).not.toThrow();
  });
});
