import { tagAttributes } from './tag-scan.js';
import type { ChallengeSignature } from './challenge-signatures.js';

/**
 * Bot walls of WAFs and hosts beyond the big bot-management vendors (F5, JD, LiteSpeed, StormWall, SiteGround, Alibaba
 * Cloud, Yandex, Qrator, ServicePipe, Variti, Imunify360, BitNinja, Reblaze, FortiWeb, Azure WAF, Tencent captcha, Jiasule,
 * Fastly), recognised by their endpoints and page templates, plus the generic cookie-and-reload check.
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
      // BIG-IP ASM Proactive Bot Defense / Advanced WAF JS challenge, usually status 200: the bobcmn bootstrap and a
      // /TSPD/<hex>?type=N script (Bot Defense's sensor stub has no id: /TSPD/?type=12) on a page without content
      // (ordinary pages get TSPD scripts injected too).
      { in: 'html', pattern: /window\[["']bobcmn["']\]\s*=/, weight: 10, maxTextChars: 300 },
      { in: 'html', pattern: /\/tspd\/([0-9a-f]{20,})?\?type=\d+/, weight: 10, maxTextChars: 300 },
      { in: 'html', pattern: /\btspd_10\d\b|\/tspd\//, weight: 3 },
    ],
    // The blocking page; the TSPD pages are its JS challenge.
    kinds: [
      { in: 'text', pattern: /the requested url was rejected|your support id is/i, kind: 'refusal' },
      { in: 'title', pattern: /^request rejected$/i, kind: 'refusal' },
    ],
  },
  {
    // JD.com's risk handler: the verification widget (jdjr) on an otherwise empty page.
    vendor: 'jd',
    markers: [
      { in: 'html', pattern: /risk[-_]handler\/[^"']{0,200}(verify|jdjr)|jdjr_verify|id=["']jdjrv-wrap/, weight: 10, maxTextChars: 300 },
      { in: 'html', pattern: /360buyimg\.com\/risk-handler/, weight: 4 },
    ],
    kind: 'captcha',
  },
  {
    // LiteSpeed / OpenLiteSpeed server-level reCAPTCHA (anti-DDoS under load): the server's own page posts to
    // /.lsrecap/recaptcha; nothing else uses that path or its lsrecaptcha variables.
    vendor: 'litespeed',
    markers: [
      { in: 'html', pattern: /\/\.lsrecap\/recaptcha|\blsrecaptcha[a-z_]*\b/, weight: 10, maxTextChars: 500 },
      { in: 'header', header: 'server', pattern: /litespeed/i, weight: 2 },
    ],
    // Its invisible reCAPTCHA (the default) submits itself; the checkbox needs a person.
    kinds: [{ in: 'html', pattern: /lsrecaptcha_type\s*=\s*["']checkbox/, kind: 'captcha' }],
  },
  {
    // StormWall (regional anti-DDoS): its check script from its own CDN on a near-blank page.
    vendor: 'stormwall',
    markers: [
      { in: 'html', pattern: /static\.stormwall\.pro|\/__stormwall\//, weight: 8, maxTextChars: 500 },
      { in: 'html', pattern: /stormwall/, weight: 2 },
      { in: 'header', header: 'server', pattern: /stormwall/i, weight: 4 },
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
    kinds: [{ in: 'text', pattern: /access is restricted due to a security rule/i, kind: 'refusal' }],
  },
  {
    // Alibaba Cloud WAF: the acw_sc__v2 cookie script on an otherwise empty page, and Taobao's "punish" slider.
    vendor: 'aliyun',
    markers: [
      { in: 'html', pattern: /acw_sc__v2/, weight: 10, maxTextChars: 200 },
      { in: 'html', pattern: /\/_____tmd_____\/|_____tmd_____\/punish/, weight: 10 },
      { in: 'html', pattern: /g\.alicdn\.com\/sd\/ncpc|awsc\/awsc\.js|id=["']nocaptcha["']/, weight: 3 },
    ],
    // The punish page is a slider a person drags; acw_sc__v2 is a cookie script.
    kinds: [{ in: 'html', pattern: /_____tmd_____\/punish|\/_____tmd_____\/|id=["']nocaptcha["']/, kind: 'captcha' }],
  },
  {
    vendor: 'yandex',
    markers: [{ in: 'html', pattern: /checkbox-captcha-form|\/checkcaptcha\?key=|\/showcaptcha\?/, weight: 10 }],
    kind: 'captcha',
  },
  {
    // Qrator's JS check loads its script from /__qrator/ and keeps its verdict in qrator_* cookies; often a 401.
    vendor: 'qrator',
    markers: [
      { in: 'html', pattern: /\/__qrator\//, weight: 8 },
      { in: 'html', pattern: /\bqrator_(jsr|jsid2?|ssid)\b/, weight: 4 },
      { in: 'header', header: 'server', pattern: /qrator/i, weight: 4 },
    ],
  },
  {
    // ServicePipe's JS check: its checker script from the vendor's CDN on a near-blank page, then a cookie and a reload.
    vendor: 'servicepipe',
    markers: [
      { in: 'html', pattern: /servicepipe\.ru\/static\/checkjs|\/checkjs\/no-bot/, weight: 10, maxTextChars: 300 },
      { in: 'html', pattern: /servicepipe/, weight: 4 },
      { in: 'html', pattern: /\b(spsc|spid|spsn)=/, weight: 3 },
      { in: 'header', header: 'server', pattern: /servicepipe/i, weight: 4 },
    ],
  },
  {
    // Variti (active bot protection): the page itself sets its ipp_* cookies and reloads.
    vendor: 'variti',
    markers: [
      { in: 'html', pattern: /document\.cookie\s*=\s*["']ipp_(uid|key|sign)/, weight: 10, maxTextChars: 300 },
      { in: 'html', pattern: /\bipp_(uid|key|sign)\b/, weight: 4 },
      { in: 'html', pattern: /variti/, weight: 4 },
      { in: 'header', header: 'server', pattern: /variti/i, weight: 4 },
    ],
  },
  {
    // Imunify360 (hosting panels' shield): the webshield's JS check submits a computed wsidchk form; its captcha and
    // denial pages name the product.
    vendor: 'imunify360',
    markers: [
      { in: 'html', pattern: /\bwsidchk\b/, weight: 10, maxTextChars: 300 },
      { in: 'text', pattern: /access denied by imunify360|imunify360 bot-protection/i, weight: 10, maxTextChars: 500 },
      { in: 'text', pattern: /please wait while your request is being verified/i, weight: 6, maxTextChars: 300 },
      { in: 'title', pattern: /^one moment,? please/i, weight: 3 },
      { in: 'header', header: 'server', pattern: /imunify360/i, weight: 6 },
    ],
    kinds: [{ in: 'text', pattern: /access denied by imunify360/i, kind: 'refusal' }],
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
    // FortiWeb's default block page: "Web Page Blocked" with the attack and message IDs the admin looks up.
    vendor: 'fortiweb',
    markers: [
      { in: 'text', pattern: /attack id:?\s*\d{8}/i, weight: 7, maxTextChars: 600 },
      { in: 'text', pattern: /message id:?\s*\d{6,}/i, weight: 4, maxTextChars: 600 },
      { in: 'title', pattern: /^web page blocked!?$/i, weight: 4 },
      { in: 'text', pattern: /the page cannot be displayed\. please contact (your|the) administrator/i, weight: 4, maxTextChars: 600 },
    ],
    kind: 'refusal',
  },
  {
    // Azure Front Door / Application Gateway WAF: the one-line "The request is blocked." with Front Door's reference
    // header, and the gateway's bare nginx-style 403 naming the product.
    vendor: 'azure_waf',
    markers: [
      { in: 'text', pattern: /^\s*the request is blocked\.?\s*$/i, weight: 8, maxTextChars: 60 },
      { in: 'header', header: 'x-azure-ref', pattern: /./, weight: 3 },
      { in: 'html', pattern: /<title>\s*403 forbidden\s*<\/title>[\s\S]{0,400}microsoft-azure-application-gateway/, weight: 10, maxTextChars: 200 },
    ],
    kind: 'refusal',
  },
  {
    // Tencent Cloud's captcha (TCaptcha) as the whole page: the widget script and its constructor with no content.
    // Login forms embed the same widget: not a gate there.
    vendor: 'tencent_captcha',
    notOnDataForms: true,
    markers: [
      { in: 'html', pattern: /(turing\.captcha\.qcloud\.com|(ssl|t)\.captcha\.qq\.com)\/tcaptcha(-global)?\.js/, weight: 6, maxTextChars: 400 },
      { in: 'html', pattern: /new\s+tencentcaptcha\s*\(/, weight: 6, maxTextChars: 400 },
      { in: 'html', pattern: /tcaptcha/, weight: 2 },
    ],
    kind: 'captcha',
  },
  {
    // Jiasule (Knownsec's anti-DDoS CDN): a 521 whose script spells out the __jsl_clearance cookie character by
    // character, then a second page whose go({...}) computes it. Both come with status 521, which otherwise means
    // "origin down" (Cloudflare's 521) and is no challenge: this vendor's markers count on it.
    vendor: 'jiasule',
    alsoOnStatuses: [521],
    markers: [
      { in: 'html', pattern: /document\.cookie\s*=\s*\(?'_'\)?\s*\+\s*\(?'_'\)?\s*\+\s*\(?'j'\)?\s*\+\s*\(?'s'\)?\s*\+\s*\(?'l'\)?/, weight: 10, maxTextChars: 200 },
      { in: 'html', pattern: /["']tn["']\s*:\s*["']__jsl_clearance(_s)?["']/, weight: 10, maxTextChars: 200 },
      { in: 'html', pattern: /__jsl_clearance/, weight: 4 },
      { in: 'header', header: 'server', pattern: /^jiasule/i, weight: 4 },
    ],
  },
  {
    // Fastly's Client Challenge (its bot management, in front of package indexes, publishers and shops): a near-blank
    // page titled "Client Challenge", usually served with 200, whose script comes from the edge's own /_fs-ch-<id>/
    // path, solves a proof of work, posts it back for a cookie and reloads. A browser gets through by itself. The page
    // says only that "a required part of this site couldn't load" (shown when the script fails).
    vendor: 'fastly',
    markers: [
      { in: 'html', pattern: /\/_fs-ch-[a-z0-9]{8,}\//, weight: 10, maxTextChars: 500 },
      { in: 'title', pattern: /^client challenge$/i, weight: 6 },
      { in: 'text', pattern: /a required part of this site couldn.t load/i, weight: 6, maxTextChars: 500 },
    ],
  },
  {
    // Any vendor's (or a home-grown) cookie check: a near-blank page whose script sets a cookie and reloads, often
    // with a "checking your browser" line. Content pages set cookies too, but they have content.
    vendor: 'js_cookie_check',
    fallback: true,
    markers: [
      // One script that stores a cookie and then reloads (or re-requests its own URL) decides on a near-blank page:
      // that is the check. A cookie written here and a reload there (a RUM snippet, a chunk-error handler) is not,
      // nor is an app shell's consent handler (fallback signatures do not count on a framework's shell).
      {
        in: 'html',
        pattern: /document\.cookie\s*=(?:(?!<\/script)[\s\S]){0,600}?(location\.reload\(|location\.(replace|assign)\(\s*(window\.|document\.)?location(\.href)?\s*\)|location\.href\s*=\s*(window\.|document\.)?location\.href|location\.href\s*=\s*["'][^"']{0,300}["'])/,
        weight: 10,
        maxTextChars: 150,
      },
      { in: 'html', pattern: /document\.cookie\s*=/, weight: 3, maxTextChars: 80 },
      { in: 'html', pattern: /location\.reload\(|location\.(replace|assign)\(\s*(location|window\.location|document\.location)\.href\s*\)/, weight: 3, maxTextChars: 80 },
      {
        in: 'text',
        pattern: /(check|checking|verify|verifying) (your|the) (browser|connection)|checking connection|browser (check|verification)|(browser|connection|request) is being (verified|checked)/i,
        weight: 5,
        maxTextChars: 300,
      },
      { in: 'html', pattern: tagAttributes('meta', 1, 500, /http-equiv=["']?refresh/, 'http-equiv='), weight: 2, maxTextChars: 300 },
    ],
  },
];
