import { ConfigError, FETCHERS, canonicalFetcherName, showEnvValue } from '@crawler/core';
import { chromiumExecutableProblem } from '@crawler/fetchers';

const BROWSER_FETCHERS: ReadonlySet<string> = new Set([FETCHERS.playwright, FETCHERS.playwrightStealth]);

/**
 * Stop a process that will serve a browser fetcher when CHROMIUM_PATH cannot be launched: the browser pool starts
 * Chromium on the first browser job, so a wrong path otherwise passed start-up and failed every such job. A process
 * serving only plain HTTP does not look at CHROMIUM_PATH.
 * @throws ConfigError naming CHROMIUM_PATH, its value, what is wrong with it and the fetchers that need it.
 */
export function assertBrowserExecutable(chromiumPath: string, servedFetchers: readonly string[]): void {
  const browsers = [...new Set(servedFetchers.map(canonicalFetcherName))].filter((f) => BROWSER_FETCHERS.has(f));
  if (browsers.length === 0) return;
  const problem = chromiumExecutableProblem(chromiumPath);
  if (problem === null) return;
  throw new ConfigError([
    {
      variable: 'CHROMIUM_PATH',
      shownValue: showEnvValue('CHROMIUM_PATH', chromiumPath),
      message: `${problem}; the browser fetchers this process serves (${browsers.join(', ')}) launch Chromium from it: install Chromium there, point CHROMIUM_PATH at it, or leave them out of FETCHERS`,
    },
  ]);
}
