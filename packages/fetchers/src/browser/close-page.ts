import type { Browser, Page } from 'playwright-core';

/**
 * How long a page's close may take before its target is closed again. Chromium can acknowledge a close that races a
 * navigation's commit (a meta refresh, a script setting `location`) and drop it: the page stays open, and Playwright's
 * `page.close()`, which has no timeout, waits for it forever. A close that works takes tens of milliseconds; a second
 * is far past that on a loaded machine.
 */
const CLOSE_WAIT_MS = 1_000;
/** Closes sent again before the page is given up on (in practice the first one closes it). */
const CLOSE_RETRIES = 3;

/**
 * Close `page`, closing its target again over CDP while Chromium leaves it open. Resolves true once the page is closed,
 * false when it still is not after {@link CLOSE_RETRIES} more closes: the caller then closes the page's context, which
 * takes the page with it. Never waits much longer than `CLOSE_WAIT_MS × (CLOSE_RETRIES + 1)` and never rejects.
 */
export async function closePage(page: Page, browser: Browser): Promise<boolean> {
  const closed = new Promise<true>((resolve) => {
    page.once('close', () => resolve(true));
    if (page.isClosed()) resolve(true);
  });
  void page.close().catch(() => undefined);
  for (let attempt = 0; ; attempt++) {
    if (await settlesWithin(closed, CLOSE_WAIT_MS)) return true;
    if (attempt === CLOSE_RETRIES) return false;
    // Bounded as well: the CDP calls have no timeout of their own either.
    await settlesWithin(closeTarget(page, browser), CLOSE_WAIT_MS);
  }
}

/** Send Chromium `Target.closeTarget` for the page's target again, the way Playwright sent it the first time. */
async function closeTarget(page: Page, browser: Browser): Promise<void> {
  const own = await page.context().newCDPSession(page);
  try {
    const { targetInfo } = await own.send('Target.getTargetInfo');
    const root = await browser.newBrowserCDPSession();
    try {
      await root.send('Target.closeTarget', { targetId: targetInfo.targetId });
    } finally {
      await root.detach().catch(() => undefined);
    }
  } finally {
    // Gone with its target when the close worked.
    await own.detach().catch(() => undefined);
  }
}

/** Whether `p` settles (either way) within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
