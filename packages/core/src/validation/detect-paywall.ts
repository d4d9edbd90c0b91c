import type { PageFeatures } from './page-features.js';

/** Subscription-wall markers over the lower-cased HTML and the visible text. Data, so new ones are one line. */
export const PAYWALL_MARKERS: readonly { in: 'html' | 'text'; pattern: RegExp }[] = [
  { in: 'html', pattern: /"isaccessibleforfree"\s*:\s*"?false"?/ },
  { in: 'html', pattern: /itemprop=["']isaccessibleforfree["'][^>]{0,500}content=["']false["']/ },
  { in: 'html', pattern: /property=["']article:content_tier["'][^>]{0,500}content=["'](locked|metered)["']/ },
  { in: 'html', pattern: /(class|id)=["'][^"']{0,300}\b(paywall|paywall-[\w-]+|[\w-]+-paywall|subscriber-only|premium-lock|metered-content|piano-offer|tp-modal|regwall)\b/ },
  { in: 'text', pattern: /subscribe to (continue|keep) reading|subscribe (now )?to (read|unlock)|(this|the) (article|content|story|post) is (only )?(available|reserved|exclusive) (for|to) (paid |premium )?(subscribers|members)|already a subscriber\?|you('ve| have) (reached|used) (your|all your) (free )?(article|story|monthly) (limit|articles)|to continue reading,? (please )?(subscribe|log in|sign in)|become a (paid )?(member|subscriber) to (read|continue)|subscribers only/i },
];

/** Whether the page shows signs of a subscription wall. */
export function detectPaywall(page: PageFeatures): boolean {
  return PAYWALL_MARKERS.some((m) => m.pattern.test(m.in === 'html' ? page.markupLower : page.visibleText));
}
