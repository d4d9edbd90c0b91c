import { isRepeatingPath, type ScopeMatcher } from '@crawler/core';
import { OUT_OF_SCOPE_SAMPLES_KEPT, type AdmitTally, type OutOfScopeReason } from '@crawler/db';

/**
 * Why a crawl's rules refuse a link, or null when they let it through. The scope, include and exclude first, then a
 * path that repeats itself (`/deep/a/a/a/`: it only goes deeper into one page, a trap): a nofollow link they refuse
 * would be refused with `followNofollow` too, so `nofollow` counts only the links that option would have followed.
 */
export function refusalOf(scope: ScopeMatcher, url: string, nofollow: boolean): OutOfScopeReason | null {
  return scope.check(url) ?? (isRepeatingPath(url) ? 'trap' : nofollow ? 'nofollow' : null);
}

/** The links one admission refuses by the crawl's rules: counted by reason, with the first few URLs of each. */
export class OutOfScopeTally {
  #total = 0;
  readonly #by: Partial<Record<OutOfScopeReason, number>> = {};
  readonly #samples: Partial<Record<OutOfScopeReason, string[]>> = {};

  add(reason: OutOfScopeReason, url: string): void {
    this.#total += 1;
    this.#by[reason] = (this.#by[reason] ?? 0) + 1;
    const samples = (this.#samples[reason] ??= []);
    if (samples.length < OUT_OF_SCOPE_SAMPLES_KEPT && !samples.includes(url)) samples.push(url);
  }

  /** The admission's tally fields for these refusals. */
  tally(): Pick<AdmitTally, 'outOfScope' | 'outOfScopeBy' | 'outOfScopeSamples'> {
    return { outOfScope: this.#total, outOfScopeBy: { ...this.#by }, outOfScopeSamples: { ...this.#samples } };
  }
}
