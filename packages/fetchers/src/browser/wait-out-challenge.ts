import type { Page, Response } from 'playwright-core';
import type { Logger } from '@crawler/core';
import type { ResolvedFetchersOptions } from '../options.js';
import { DomChanges } from './dom-changes.js';
import type { NavigationBudget } from './navigation-budget.js';
import type { NetworkTracker } from './page-watchers.js';
import { challengeOf, settledContent, type ChallengeEncounter, type DocumentTracker, type RenderedChallenge } from './challenge-wait.js';

// While a challenge page is waited on, how often the fetcher asks whether its document changed in place (one round
// trip that reads two numbers), and how soon and how rarely a changed document is read and judged again.
const DOM_LOOK_MS = 250;
const REJUDGE_MIN_MS = 250;
const REJUDGE_MAX_MS = 2_000;

/** The browser options the wait reads: how long a challenge is waited on, and how long a new document's network may take to go quiet. */
export type ChallengeWaitOptions = Pick<ResolvedFetchersOptions['browser'], 'challengeWaitMs' | 'networkIdleCapMs'>;

/**
 * The rendered page is a challenge: give its script up to `challengeWaitMs` (and never past the fetch's deadline)
 * to navigate or reload into content, as it does in a real browser. Each new main-frame document is rendered and
 * checked again; a second challenge (a two-step interstitial) keeps waiting. The document on screen is checked again
 * too when it changes in place: a check may end without navigating, its script swapping its spinner for a captcha or
 * writing a refusal over the page. The cookie the script set stays in the site's context, so the site's next pages
 * skip the wall. A page that cannot clear by itself (a refusal, a captcha, a waiting room) is not waited on: it is
 * the result at once, as it would be after the wait, whether it is the first page, the one the interstitial led to,
 * or the one it turned into.
 */
export async function waitOutChallenge(page: Page, documents: DocumentTracker, network: NetworkTracker, navigations: NavigationBudget, challenge: RenderedChallenge, first: RenderedChallenge, shown: Response, fetchDeadline: number, downloaded: () => boolean, browser: ChallengeWaitOptions, log: Logger): Promise<ChallengeEncounter> {
  const { vendor, kind } = challenge;
  const encounter: ChallengeEncounter = { vendor, kind, firstVendor: first.vendor, firstKind: first.kind, cleared: false, waitedMs: 0, documents: documents.documents };
  if (kind !== 'interstitial') {
    log.debug({ url: page.url(), vendor, kind }, 'challenge page cannot clear by itself: not waited on');
    return encounter;
  }
  const started = Date.now();
  // Leave a second of the fetch's own deadline for reading the page: a wall that does not clear is a result (the
  // block it always was), not a timeout.
  const deadline = Math.min(started + browser.challengeWaitMs, fetchDeadline - 1_000);
  let seen = documents.documents.length;
  let dom = await DomChanges.watch(page);
  // A document that changes without turning into anything (a spinner's text, a countdown) is read again at most this
  // often, the spacing doubling each time it is still the same check: the cost of the wait stays a few reads of a
  // small page, however busy its script.
  let spacingMs = REJUDGE_MIN_MS;
  let judgedAt = started;
  let inPlaceReads = 0;
  try {
    // A page stopped from navigating further cannot reload into content: the rest of the wait would be for nothing.
    // One whose script reloaded onto a file is through (the file is the result).
    while (Date.now() < deadline && navigations.refused === 0 && !downloaded()) {
      if (!(await documents.next(seen, Math.min(deadline, Date.now() + DOM_LOOK_MS)))) {
        if (Date.now() - judgedAt < spacingMs || !(await dom.changed())) continue;
        judgedAt = Date.now();
        inPlaceReads += 1;
        const html = await settledContent(page, fetchDeadline).catch(() => null);
        if (html === null) continue;
        const current = documents.last ?? shown;
        const now = challengeOf(current.status(), await current.allHeaders(), html);
        // Only a page that can no longer clear by itself ends the wait here. One the detectors stop recognising is
        // still waited on: a check's script rewrites its own page as it works (a progress line, a solved proof of
        // work, its script element removed), and what it led to is judged when its navigation lands.
        if (now !== undefined && now.kind !== 'interstitial') {
          encounter.vendor = now.vendor;
          encounter.kind = now.kind;
          log.debug({ url: page.url(), vendor: now.vendor, kind: now.kind }, 'challenge page turned in place into one that cannot clear by itself: wait ends');
          break;
        }
        spacingMs = Math.min(spacingMs * 2, REJUDGE_MAX_MS);
        continue;
      }
      seen = documents.documents.length;
      await page.waitForLoadState('domcontentloaded', { timeout: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
      await network.quiet(Math.min(browser.networkIdleCapMs, Math.max(0, deadline - Date.now())));
      // Another navigation already started: take it from the top.
      if (documents.documents.length > seen) continue;
      const last = documents.last;
      if (!last) continue;
      const html = await settledContent(page, fetchDeadline).catch(() => null);
      if (html === null) continue;
      const now = challengeOf(last.status(), await last.allHeaders(), html);
      if (now === undefined) break;
      encounter.vendor = now.vendor;
      encounter.kind = now.kind;
      // The check ended on a page that cannot clear by itself (a firewall block after a JS challenge, a captcha the
      // check escalated to): the rest of the wait would hold the browser for this very page.
      if (now.kind !== 'interstitial') {
        log.debug({ url: page.url(), vendor: now.vendor, kind: now.kind }, 'challenge turned into one that cannot clear by itself: wait ends');
        break;
      }
      // Another check on a new document: watch that one.
      await dom.stop();
      dom = await DomChanges.watch(page);
      spacingMs = REJUDGE_MIN_MS;
      judgedAt = Date.now();
    }
  } finally {
    await dom.stop();
  }
  encounter.waitedMs = Date.now() - started;
  log.debug({ url: page.url(), vendor: encounter.vendor, kind: encounter.kind, firstVendor: encounter.firstVendor, waitedMs: encounter.waitedMs, documents: encounter.documents.length, inPlaceReads }, 'waited on a challenge page');
  return encounter;
}
