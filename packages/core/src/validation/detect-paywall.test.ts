import { describe, expect, it } from 'vitest';
import { detectPaywall } from './detect-paywall.js';
import { extractPageFeatures } from './page-features.js';

const prose = '<p>' + 'The harbour town market opened early this morning. '.repeat(10) + '</p>';
const page = (extra: string) => extractPageFeatures(`<html><head><title>Story</title></head><body>${prose}${extra}</body></html>`);

/** The markers are tested as one alternation per subject: each must still be found on its own. */
describe('detectPaywall', () => {
  it.each([
    ['JSON-LD isAccessibleForFree', '<script type="application/ld+json">{"isAccessibleForFree": "False"}</script>'],
    ['microdata isAccessibleForFree', '<meta itemprop="isAccessibleForFree" content="false">'],
    ['article:content_tier', '<meta property="article:content_tier" content="metered">'],
    ['a paywall class', '<div class="story-body tp-modal"></div>'],
    ['the wording', '<p>You have reached your free article limit.</p>'],
    // Each alternative of the wording, in capitals: the keyword check before the regex lower-cases the text.
    ['the wording: keep reading', '<p>SUBSCRIBE TO KEEP READING</p>'],
    ['the wording: members', '<p>This Story Is Reserved For Premium Members</p>'],
    ['the wording: already a subscriber', '<p>Already a Subscriber? Log in</p>'],
    ["the wording: you've used", "<p>You've used all your free monthly articles</p>"],
    ['the wording: to continue reading', '<p>To Continue Reading, Please Sign In</p>'],
    ['the wording: become a member', '<p>Become a paid MEMBER to continue</p>'],
  ])('finds %s', (_name, extra) => {
    expect(detectPaywall(page(extra))).toBe(true);
  });

  it('finds nothing on an ordinary article, nor in quoted markup', () => {
    expect(detectPaywall(page(''))).toBe(false);
    expect(detectPaywall(page('<pre>&lt;div class="paywall"&gt;</pre><p>Subscribe to our newsletter.</p>'))).toBe(false);
  });
});
