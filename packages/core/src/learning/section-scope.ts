import type { BestFetcherResult } from '../contracts/scoring.js';
import { isConfident } from '../scoring/score-fetchers.js';
import type { DomainAttempt } from './domain-memory.js';

/** What a section's own attempts say: the attempts matching its `section` heuristic alone, scored like the pool. */
export interface SectionScore {
  /** The section, as the `section` heuristic stores it ("example.com/blog"). */
  section: string;
  /** The section's own matching attempts, every fetcher together (rate-limited ones left out, as in every score). */
  attempts: number;
  /** Its own score per fetcher. */
  result: BestFetcherResult;
}

/** The evidence the router's learned step decides from. */
export interface LearnedScope {
  /** `section`: the URL's section has enough attempts of its own to be judged apart from the rest of its domain. */
  scope: 'domain' | 'section';
  /** The score to decide from: the section's own when it is confident, else the domain-wide pooled score. */
  learned: BestFetcherResult;
  /** The recent attempts domain memory reads: the section's own in `section` scope, else the domain's. */
  recent: readonly DomainAttempt[];
}

/** Options for {@link scopeLearned}. */
export interface ScopeLearnedInput {
  /** The pooled score for the URL's routing heuristics (domain, non-HTML suffix, ...). */
  pooled: BestFetcherResult;
  /** The section's own score, when the URL has a section and it was asked for. */
  section?: SectionScore | null;
  /** The domain's latest attempts, newest first, each with the section logged with it. */
  recent: readonly DomainAttempt[];
  /** A section with at least this many attempts of its own is judged on its own evidence. */
  minSampleSize: number;
  confidenceThreshold: number;
}

/**
 * Natural specificity by section. Sites mix kinds by section (an app under /app, static articles under /blog, a
 * walled /checkout): a domain-wide score sends every section to the tool its busiest section needs, and since a browser
 * also succeeds on a static page, the static section's own attempts then only confirm the browser. So a section with
 * at least `minSampleSize` attempts of its own is judged on them: its own confident score first, else the pooled one;
 * and the domain's memory (the latest working browser, a disqualified fetcher, plain HTTP remembered) is read from
 * the section's own recent attempts, so another section's outcomes do not override its evidence. A browser the section
 * got only because the domain's score chose it was never shown to be NEEDED there, so it is re-checked by a probe
 * (domain memory's re-verification, applied to the section). A section with fewer attempts, and every URL at a site's
 * root, is judged exactly as before: by the domain. A site with one section per article slug therefore behaves as a
 * site without sections.
 */
export function scopeLearned(input: ScopeLearnedInput): LearnedScope {
  const { pooled, section, recent } = input;
  if (!hasOwnEvidence(section, input.minSampleSize)) return { scope: 'domain', learned: pooled, recent };
  const own = isConfident(section.result.best, input.confidenceThreshold) ? section.result : pooled;
  return { scope: 'section', learned: own, recent: attemptsInSection(recent, section.section) };
}

/** Whether a section has enough attempts of its own (at least `minSampleSize`) to be judged on them. */
export function hasOwnEvidence(section: Pick<SectionScore, 'attempts'> | null | undefined, minSampleSize: number): section is SectionScore {
  return section !== null && section !== undefined && section.attempts >= minSampleSize;
}

/**
 * The attempts among `recent` on pages of `section`: the section each attempt was logged with (the domain-state read
 * returns it), so the router parses no URL per decision. Attempts without one (a site's root, or logged before the
 * `section` heuristic existed) are in no section.
 */
export function attemptsInSection(recent: readonly DomainAttempt[], section: string): DomainAttempt[] {
  return recent.filter((a) => a.section === section);
}
