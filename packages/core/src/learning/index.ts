export { ROUTING_HEURISTIC_TYPES, NON_HTML_SUFFIXES, isNonHtmlSuffix, selectRoutingHeuristics } from './routing-heuristics.js';
export {
  DOMAIN_MEMORY_SOURCE,
  REVERIFY_AFTER_DAYS,
  DEFAULT_REVERIFY_AFTER_DAYS,
  summarizeDomainAttempts,
  isDisqualified,
  needsReverification,
  rememberedFetcher,
  type DomainAttempt,
  type DomainFetcherState,
} from './domain-memory.js';
export { scopeLearned, attemptsInSection, hasOwnEvidence, type SectionScore, type LearnedScope, type ScopeLearnedInput } from './section-scope.js';
