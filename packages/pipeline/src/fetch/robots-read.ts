import { ESCALATION, FETCHERS, canonicalFetcherName, isCertificateError, isExitError, isUrlPolicyError, retryAfterMsOf, type Logger, type RobotsRead } from '@crawler/core';
import { isFetchError, type FetchResult } from '@crawler/fetchers';
import { judgeProbe } from './response-analysis.js';

/**
 * Read `${origin}/robots.txt` with `fetch` (plain HTTP, or a browser): the response, `{ browser }` when this tool
 * cannot read it and a browser may, or `{ unreachable }` with what the network said when the site cannot be reached.
 * A head undici refuses and Chromium reads (`wrong_tool`) and a bot wall's challenge are no outage: they name the tool
 * that reads the file (a wall, the tool a probe meeting it would pick; a browser still walled, the next one up).
 * Refusals of the URL, its certificate or every proxy are thrown: the caller fails or waits with them.
 */
export async function readRobots(origin: string, tool: string, fetch: (url: string) => Promise<FetchResult>, logger: Logger): Promise<RobotsRead> {
  let res: FetchResult;
  try {
    res = await fetch(`${origin}/robots.txt`);
  } catch (err) {
    if (isUrlPolicyError(err)) throw err; // the origin itself is refused: not an unreachable robots.txt
    if (isExitError(err)) throw err; // every proxy down: nothing learned of the site
    if (isCertificateError(err)) throw err; // the link fails with it: a page fetch would meet the same certificate
    const code = (err as { code?: string }).code;
    if (isFetchError(err, 'wrong_tool') && canonicalFetcherName(tool) === FETCHERS.simpleHttp) {
      return { browser: { fetcher: FETCHERS.playwright, reason: `${code}: ${(err as Error).message}` } };
    }
    logger.info({ origin, errorType: code, error: (err as Error).message }, 'robots.txt could not be read');
    // What the network said goes into the unreachable verdict, and so into the paused or failed link's last_error.
    return { unreachable: { reason: `${code ?? 'error'}: ${err instanceof Error ? err.message : String(err)}` } };
  }
  const fetcher = canonicalFetcherName(tool);
  if (res.challenge && !res.challenge.cleared) {
    // A browser still walled: the next tool up reads it, or none (a wall nothing passes stays "only a browser could").
    const next = ESCALATION.blocked[fetcher] ?? fetcher;
    return { browser: { fetcher: next, reason: `${res.challenge.vendor ?? 'bot wall'} ${res.challenge.kind} in front of robots.txt, not passed by ${fetcher}` } };
  }
  if (fetcher === FETCHERS.simpleHttp && res.status !== 429 && res.contentType === 'text/html') {
    // A wall's page in place of the file (403, 503, or 200 for proof-of-work walls) is not the site's robots.txt: a
    // 403 read as "no robots.txt" would crawl what the file behind the wall forbids.
    const verdict = judgeProbe({ response: res });
    if (verdict.reason.startsWith('blocked')) return { browser: { fetcher: verdict.fetcher, reason: `${verdict.reason} (${res.status}) in front of robots.txt`, status: res.status } };
  }
  return { status: res.status, body: res.text ?? '', retryAfterMs: res.status === 429 ? retryAfterMsOf(res.headers, new Date()) : null };
}
