import type { JSHandle, Page } from 'playwright-core';

/** The page's side of a watch: a count of mutations, the count at the last look, and the observer's off switch. */
interface MutationCount {
  n: number;
  read: number;
  stop(): void;
}

/**
 * Whether the document on screen has changed since the last look, without serialising it: a MutationObserver in the
 * page counts changes to its nodes and their text, and each look reads two numbers in one round trip. Attribute
 * changes are left out: a spinner toggles classes and styles many times a second, and no detector reads them.
 * The count lives behind a handle, not in a global a page's script could find.
 */
export class DomChanges {
  readonly #count: JSHandle<MutationCount> | null;

  private constructor(count: JSHandle<MutationCount> | null) {
    this.#count = count;
  }

  /**
   * Start watching the page's current document. The first look reports a change: the page may have changed between the
   * caller's last read of it and the observer's start. A page whose script broke MutationObserver is watched blind:
   * every look reports a change, and the caller's own spacing of its checks bounds the cost.
   */
  static async watch(page: Page): Promise<DomChanges> {
    const count = await page
      .evaluateHandle(() => {
        const count = { n: 1, read: 0, stop: () => observer.disconnect() };
        const observer = new MutationObserver((records) => {
          count.n += records.length;
        });
        observer.observe(document, { childList: true, subtree: true, characterData: true });
        return count;
      })
      .catch(() => null);
    return new DomChanges(count);
  }

  /**
   * Whether the document changed since the previous look. False once the document is gone (a navigation replaced it:
   * the new document is the caller's to judge, and to watch anew).
   */
  async changed(): Promise<boolean> {
    if (!this.#count) return true;
    return this.#count
      .evaluate((c) => {
        const changed = c.n !== c.read;
        c.read = c.n;
        return changed;
      })
      .catch(() => false);
  }

  /** Disconnect the observer and release the handle; the document may already be gone. */
  async stop(): Promise<void> {
    if (!this.#count) return;
    await this.#count.evaluate((c) => c.stop()).catch(() => undefined);
    await this.#count.dispose().catch(() => undefined);
  }
}
