/**
 * Bot-wall signatures as data (after crawlee's blocked.ts): each vendor lists markers with weights. A response is
 * a challenge when one vendor's matched weights reach CHALLENGE_SCORE_THRESHOLD on a challenge-sized page, or a
 * decisive marker (a header only ever sent with a challenge) matches. Mentions are not challenges: vendor names,
 * a contact-form reCAPTCHA or the scripts vendors inject into ordinary pages (Cloudflare's jsd/main.js, Imperva's
 * _Incapsula_Resource, PerimeterX's _pxAppId, DataDome's tags.js) are weak on purpose.
 *
 * Weights: 10 = sufficient on a small page, 5–8 = needs a second marker, 2–4 = corroboration only.
 */
import { WAF_AND_HOSTING_SIGNATURES } from './waf-signatures.js';
import { anyOf, tagAttributes, type TextPattern } from './tag-scan.js';

export interface ChallengeMarker {
  /** Where to look: lower-cased raw HTML, the title, the visible text, or one response header. */
  in: 'html' | 'title' | 'text' | 'header';
  /** Header name (lower-case) when `in` is 'header'. */
  header?: string;
  /** A RegExp, or a tag scan (tag-scan.ts) where a regex would backtrack over a tag's attributes. */
  pattern: TextPattern;
  weight: number;
  /** Sufficient alone, on a page of any size. */
  decisive?: boolean;
  /** Counts only when the page has at most this much visible text (a vendor script on an otherwise blank page). */
  maxTextChars?: number;
  /**
   * Live challenge data (a script element that carries the challenge itself) that no other page has: it counts, and
   * reaches the threshold alone, on a page of any length. Quoted markup in <pre> and <code> is never matched.
   */
  anyLength?: boolean;
}

/**
 * What a challenge page waits for, and so whether a browser should wait on it. `interstitial`: the page's own script
 * (a JS check, a proof of work, a cookie and a reload) takes a browser through by itself, in seconds. `refusal`: a
 * block page; nothing on it ever lets the visitor in. `captcha`: a person has to solve, tick or press and hold
 * something. `waiting_room`: a queue that lets visitors in over minutes, not within a fetch.
 */
export type ChallengeKind = 'interstitial' | 'refusal' | 'captcha' | 'waiting_room';

/** Evidence of what kind of challenge a page is, once its signature has named it: it weighs nothing. */
export interface ChallengeKindMarker extends Pick<ChallengeMarker, 'in' | 'header' | 'pattern'> {
  kind: ChallengeKind;
}

export interface ChallengeSignature {
  vendor: string;
  markers: readonly ChallengeMarker[];
  /** The kind of a page this signature names when none of `kinds` matches. @defaultValue 'interstitial' */
  kind?: ChallengeKind;
  /**
   * Checked in order on a page this signature names: the first that matches decides its kind. Whether the page is a
   * challenge at all is the markers' decision, not these.
   */
  kinds?: readonly ChallengeKindMarker[];
  /**
   * Body markers do not count on a page with fields a person types data into: a login, sign-up or contact form
   * that embeds a captcha widget (and tells the user to tick it) is a form, not a gate. Headers still count.
   */
  notOnDataForms?: boolean;
  /**
   * Origin-error statuses (5xx other than 503, normally never a challenge) on which this vendor serves its
   * challenge, so its markers still count there.
   */
  alsoOnStatuses?: readonly number[];
  /** Generic evidence: names the page only when no vendor-specific signature also reaches the threshold. */
  fallback?: boolean;
}

/** Score at which a vendor's markers make a small page a challenge. */
export const CHALLENGE_SCORE_THRESHOLD = 10;
/** Challenge pages are small: above this much visible text only a decisive marker counts. */
export const MAX_CHALLENGE_TEXT_CHARS = 1500;
/**
 * The longest vendor challenge template (Cloudflare's "Attention Required" with its "Why have I been blocked? / What
 * can I do?" blurbs) has about 700 characters of text, save Anubis's (about 1,200), which a decisive marker names. Above this, a page is prose that may quote or embed a vendor's
 * markers (an article about challenges, a vendor's docs, a shop page with a sensor script): only a double-strength
 * score makes it a challenge.
 */
export const LONG_CHALLENGE_TEXT_CHARS = 800;

const CAPTCHA_PHRASES =
  /verify (that )?you('| a)re (a )?human|show us your human side|can'?t tell if you'?re a human|are you (a )?(robot|human)|(i'?m|i am) not a robot|unusual traffic|security check|human verification|complete the (security )?(check|captcha)|prove you('| a)re (a )?human|solve the (captcha|puzzle)|checking your browser|automated (queries|requests|access)|confirm you are not a bot|bot (check|protection) (is )?(active|in progress)/i;

/**
 * The same "prove you are a person" wording in other languages, by its two universal anchors rather than by phrase:
 * a negation shortly before "robot" (non sei un robot, não é um robô, kein Roboter, nie jesteś robotem…) or the
 * word for a human being, plus the few CJK/Cyrillic idioms that name the check itself. Only ever corroborates a
 * captcha widget (the widget marker is required to reach the threshold).
 */
const LOCALISED_CAPTCHA_PHRASES =
  /\b(non|não|nao|no|nicht|kein|keine|pas|nie|geen|ne|bukan|değil)\b[^.!?]{0,25}\brob(ot|ô)|rob(ot|ô)\w*\s+(değil|nicht)\b|\b(humano|humana|humain|humaine|umano|umana|mensch|człowiek\w*|insan|manusia)\b|не робот|человек|проверк[аи] (вашего )?браузера|(不是|非)机器人|人机验证|真人|完成.{0,8}验证|拖动.{0,10}滑块|ロボット(による|ではない|でない)|人間|로봇이 아닙니다|자동 ?입력 ?방지/i;
const LOCALISED_GATE_TITLES =
  /验证码|sicherheitsüberprüfung|sicherheitsabfrage|(vérification|contrôle) de sécurité|(verificación|control) de seguridad|(verificação|verificacao) de segurança|(controllo|verifica) di sicurezza|beveiligingscontrole|kontrola bezpieczeństwa|güvenlik (kontrolü|doğrulaması)|вы не робот|проверка браузера|安全验证|访问验证|人机验证|アクセス確認|画像認証|보안 확인/i;

/** A server-generated image captcha: an image served by a script or with a query string, not a screenshot file. */
const IMAGE_CAPTCHA = tagAttributes('img', 1, 500, /src=["'][^"']{0,300}captcha[^"']{0,300}(\.(php|aspx?|jsp|cgi)|\?)/, 'src=');
const GATE_TITLES =
  /are you (a )?(robot|human)|security (check|verification)|captcha|bot (check|detection)|checking your browser|unusual traffic|one more step|just a moment|verify (that )?you('| a)re (a )?human|human verification|verification required|access (check|denied)/i;

export const CHALLENGE_SIGNATURES: readonly ChallengeSignature[] = [
  {
    vendor: 'cloudflare',
    markers: [
      { in: 'header', header: 'cf-mitigated', pattern: /challenge/i, weight: 10, decisive: true },
      { in: 'html', pattern: /_cf_chl_opt|cf_chl_prog|cf-challenge-running|cf_chl_rc_[a-z]|__cf_chl_(managed_|jschl_|captcha_|f_|rt_)?tk__?|cf_captcha_kind|cf-captcha-container/, weight: 10 },
      // The pre-2020 "I'm Under Attack" and captcha forms.
      { in: 'html', pattern: /\/cdn-cgi\/l\/chk_(jschl|captcha)|name=["']jschl_(vc|answer)["']/, weight: 10 },
      { in: 'html', pattern: /\/cdn-cgi\/challenge-platform\/(h\/[a-z]\/)?orchestrate\//, weight: 10 },
      { in: 'html', pattern: /cf-browser-verification|cf-im-under-attack|id=["']challenge-(form|stage|body-text|error-text)["']/, weight: 10 },
      // SPAs also show "Just a moment..." while loading: the title needs a second Cloudflare marker beyond Server.
      { in: 'title', pattern: /^just a moment(\.*|…)$/i, weight: 7 },
      { in: 'title', pattern: /^(attention required!|please wait\.*|one more step|just a moment\.*) \| cloudflare$/i, weight: 10 },
      { in: 'title', pattern: /used cloudflare to restrict access/i, weight: 10 },
      { in: 'text', pattern: /checking (if the site connection is secure|your browser before accessing)|(we are|while we are) checking your browser|verifying you are human|needs to review the security of your connection|enable javascript and cookies to continue/i, weight: 6 },
      { in: 'text', pattern: /sorry, you have been blocked|you are unable to access|error (1005|1006|1007|1008|1009|1010|1012|1020)\b/i, weight: 6 },
      { in: 'html', pattern: /cf-error-details|cf-wrapper/, weight: 2 },
      { in: 'text', pattern: /ray id:?\s*[0-9a-f]{16}/i, weight: 3 },
      { in: 'text', pattern: /performance (&|and) security by cloudflare/i, weight: 2 },
      { in: 'html', pattern: /challenges\.cloudflare\.com\/turnstile/, weight: 3 },
      { in: 'header', header: 'server', pattern: /cloudflare/i, weight: 2 },
    ],
    kinds: [
      // The firewall's block pages (1020 and its kin, a WAF rule's "Sorry, you have been blocked", 1015's rate limit).
      { in: 'text', pattern: /sorry, you have been blocked|you are unable to access|you are being rate limited|error (1005|1006|1007|1008|1009|1010|1012|1015|1020)\b/i, kind: 'refusal' },
      { in: 'title', pattern: /used cloudflare to restrict access/i, kind: 'refusal' },
      // The pre-2022 captcha page ("One more step"), an hCaptcha or reCAPTCHA a person solves, and the interactive
      // challenge (`cType: 'interactive'`): a Turnstile checkbox the visitor has to tick. A managed or
      // non-interactive challenge passes a real browser by itself.
      { in: 'html', pattern: /cf_captcha_kind|cf-captcha-container|ctype:\s*['"]interactive['"]/, kind: 'captcha' },
    ],
  },
  {
    vendor: 'datadome',
    markers: [
      { in: 'html', pattern: /(geo|ct|interstitial|c)\.captcha-delivery\.com/, weight: 10 },
      { in: 'html', pattern: /var dd\s*=\s*\{\s*['"](rt|cid)['"]\s*:/, weight: 10 },
      { in: 'text', pattern: /please enable js and disable any ad blocker/i, weight: 5 },
      { in: 'text', pattern: /something about the behaviou?r of the browser has caught our attention|we can'?t tell if you'?re a human or a bot/i, weight: 6 },
      { in: 'header', header: 'x-datadome', pattern: /./, weight: 2 },
      { in: 'header', header: 'x-dd-b', pattern: /./, weight: 2 },
      { in: 'html', pattern: /datadome/, weight: 2 },
    ],
    // `rt` is the response type: i, the device check that clears itself; c, the captcha; b, a block. The captcha's own
    // frame comes first: a device check that fails puts it in the page in place, and the rendered page still carries
    // the check's `rt: 'i'` config.
    kinds: [
      { in: 'html', pattern: tagAttributes('iframe', 0, 300, /\bsrc=["'][^"']{0,40}captcha-delivery\.com\/captcha\//, 'src='), kind: 'captcha' },
      { in: 'html', pattern: /var dd\s*=\s*\{\s*['"]rt['"]\s*:\s*['"]i['"]|captcha-delivery\.com\/interstitial\//, kind: 'interstitial' },
      { in: 'html', pattern: /var dd\s*=\s*\{\s*['"]rt['"]\s*:\s*['"]b['"]/, kind: 'refusal' },
      { in: 'html', pattern: /var dd\s*=\s*\{\s*['"]rt['"]\s*:\s*['"]c['"]|captcha-delivery\.com\/captcha\//, kind: 'captcha' },
    ],
  },
  {
    vendor: 'perimeterx',
    markers: [
      { in: 'html', pattern: /id=["']px-captcha["']|#px-captcha|_pxcaptcha/, weight: 10 },
      { in: 'html', pattern: /captcha\.px-cdn\.net|captcha\.px-cloud\.net|\/captcha\/captcha\.js\?a=c/, weight: 8 },
      { in: 'title', pattern: /^access to this page has been denied\.?$/i, weight: 8 },
      { in: 'text', pattern: /press (&|and) hold/i, weight: 5 },
      { in: 'html', pattern: /window\._pxappid|_pxuuid|_pxvid|_pxhd|_pxjsclientsrc/, weight: 3 },
      { in: 'html', pattern: /perimeterx|px-cdn\.net|px-cloud\.net|humansecurity/, weight: 2 },
    ],
    // Its sensor runs on ordinary pages; the page it serves instead is the "Press & Hold" captcha.
    kind: 'captcha',
  },
  {
    vendor: 'akamai',
    markers: [
      { in: 'html', pattern: /\/_sec\/cp_challenge\/|sec-if-cpt-container|sec-cpt-if|id=["']sec-container["']/, weight: 10 },
      { in: 'html', pattern: /\/_sec\/verify\?provider=interstitial|triggerinterstitialchallenge/, weight: 10 },
      { in: 'html', pattern: /bm-verify/, weight: 6 },
      { in: 'text', pattern: /reference\s*#\s*\d+\.[0-9a-f]+\.\d+\.[0-9a-f]+/i, weight: 8 },
      { in: 'text', pattern: /you don'?t have permission to access .{0,200} on this server/i, weight: 6 },
      { in: 'title', pattern: /^access denied$/i, weight: 4 },
      { in: 'html', pattern: /errors\.edgesuite\.net|errors\.akamaized\.net/, weight: 5 },
      { in: 'html', pattern: /_abck|ak_bmsc/, weight: 3 },
      { in: 'header', header: 'server', pattern: /akamaighost|akamai/i, weight: 2 },
    ],
    // The edge's "Access Denied" (with its reference number); sec-cpt and bm-verify are proofs of work.
    kinds: [
      { in: 'text', pattern: /reference\s*#\s*\d+\.[0-9a-f]+\.\d+\.[0-9a-f]+|you don'?t have permission to access/i, kind: 'refusal' },
      { in: 'title', pattern: /^access denied$/i, kind: 'refusal' },
      { in: 'html', pattern: /errors\.edgesuite\.net|errors\.akamaized\.net/, kind: 'refusal' },
    ],
  },
  {
    vendor: 'imperva',
    markers: [
      { in: 'text', pattern: /incapsula incident id|incident id:\s*\d+-\d+/i, weight: 10 },
      { in: 'html', pattern: tagAttributes('iframe', 1, 500, /_incapsula_resource/, '_incapsula_resource'), weight: 10 },
      { in: 'html', pattern: /_incapsula_resource/, weight: 4 },
      // The JS challenge is the resource script on a blank page; ordinary pages carry the same script plus content.
      { in: 'html', pattern: tagAttributes('script', 1, 500, /src=["'][^"']{0,300}_incapsula_resource/, 'src='), weight: 10, maxTextChars: 30 },
      { in: 'text', pattern: /request unsuccessful/i, weight: 4 },
      { in: 'html', pattern: /incap_ses_|visid_incap_/, weight: 3 },
      // Imperva Advanced Bot Protection (formerly Distil Networks) interstitial.
      { in: 'title', pattern: /^pardon our interruption/i, weight: 8 },
      { in: 'text', pattern: /made us think you were a bot|something about your browser made us think/i, weight: 8 },
      { in: 'html', pattern: /distil_r_captcha|distilcaptcha|\/distil_identify|ga_distil/, weight: 6 },
      { in: 'header', header: 'x-iinfo', pattern: /./, weight: 2 },
      { in: 'header', header: 'x-cdn', pattern: /incapsula|imperva/i, weight: 2 },
    ],
    // The incident page (in its frame or as text) is a block; "Pardon Our Interruption" asks for a captcha or a form.
    kinds: [
      { in: 'text', pattern: /incapsula incident id|incident id:\s*\d+-\d+|request unsuccessful/i, kind: 'refusal' },
      { in: 'html', pattern: tagAttributes('iframe', 1, 500, /_incapsula_resource/, '_incapsula_resource'), kind: 'refusal' },
      { in: 'title', pattern: /^pardon our interruption/i, kind: 'captcha' },
      { in: 'html', pattern: /distil_r_captcha|distilcaptcha/, kind: 'captcha' },
    ],
  },
  {
    vendor: 'aws_waf',
    markers: [
      { in: 'header', header: 'x-amzn-waf-action', pattern: /challenge|captcha|block/i, weight: 10, decisive: true },
      { in: 'html', pattern: /window\.gokuprops\s*=|gokuprops\s*=\s*\{/, weight: 10 },
      { in: 'html', pattern: /\.token\.awswaf\.com\/[^"']{0,300}\/challenge\.js|\.captcha\.awswaf\.com/, weight: 5 },
      { in: 'html', pattern: /awswafintegration|awswafcaptcha|awswaf\.captcha/, weight: 3 },
      { in: 'html', pattern: /id=["'](challenge|captcha)-container["']/, weight: 3 },
    ],
    kinds: [
      { in: 'header', header: 'x-amzn-waf-action', pattern: /challenge/i, kind: 'interstitial' },
      { in: 'header', header: 'x-amzn-waf-action', pattern: /block/i, kind: 'refusal' },
      { in: 'header', header: 'x-amzn-waf-action', pattern: /captcha/i, kind: 'captcha' },
      { in: 'html', pattern: /\.captcha\.awswaf\.com|awswafcaptcha|awswaf\.captcha|id=["']captcha-container["']/, kind: 'captcha' },
    ],
  },
  {
    vendor: 'sucuri',
    markers: [
      { in: 'header', header: 'x-sucuri-block', pattern: /./, weight: 10, decisive: true },
      // The block page's title ("Sucuri WebSite Firewall - Access Denied"), not any title that names the product.
      { in: 'title', pattern: /^sucuri website firewall\s*[-–|]\s*(cloudproxy\s*[-–|]\s*)?(access denied|captcha|blocked)/i, weight: 10 },
      { in: 'html', pattern: /sucuri_cloudproxy_js|sucuri_cloudproxy_uuid/, weight: 10 },
      { in: 'text', pattern: /access denied - sucuri website firewall|cloudproxy@sucuri\.net/i, weight: 8 },
      { in: 'text', pattern: /sucuri (website )?firewall/i, weight: 4 },
      { in: 'header', header: 'x-sucuri-id', pattern: /./, weight: 2 },
      { in: 'header', header: 'server', pattern: /sucuri|cloudproxy/i, weight: 2 },
    ],
    // The firewall's block page; sucuri_cloudproxy_js is its JS challenge.
    kinds: [
      { in: 'header', header: 'x-sucuri-block', pattern: /./, kind: 'refusal' },
      { in: 'title', pattern: /^sucuri website firewall\s*[-–|]\s*(cloudproxy\s*[-–|]\s*)?(access denied|blocked)/i, kind: 'refusal' },
      { in: 'text', pattern: /access denied - sucuri website firewall|cloudproxy@sucuri\.net/i, kind: 'refusal' },
      { in: 'title', pattern: /^sucuri website firewall\s*[-–|]\s*(cloudproxy\s*[-–|]\s*)?captcha/i, kind: 'captcha' },
    ],
  },
  {
    vendor: 'ddos_guard',
    markers: [
      { in: 'title', pattern: /^ddos-guard$/i, weight: 10 },
      { in: 'html', pattern: /check\.ddos-guard\.net|ddos-guard\.net\/[^"']{0,300}\.js|__ddg[0-9_]/, weight: 5 },
      // The JS challenge and its pixel are served by the protected site itself, under /.well-known/ddos-guard/.
      { in: 'html', pattern: /\/\.well-known\/ddos-guard\/(js-challenge|check|id)\b/, weight: 10, maxTextChars: 300 },
      { in: 'text', pattern: /checking your browser before accessing/i, weight: 6 },
      { in: 'header', header: 'server', pattern: /ddos-guard/i, weight: 4 },
    ],
  },
  {
    vendor: 'vercel',
    markers: [
      { in: 'header', header: 'x-vercel-mitigated', pattern: /challenge|deny/i, weight: 10, decisive: true },
      // The checkpoint's whole title: a page whose title talks about the checkpoint is not one.
      { in: 'title', pattern: /^vercel security checkpoint$/i, weight: 10 },
    ],
    kinds: [{ in: 'header', header: 'x-vercel-mitigated', pattern: /deny/i, kind: 'refusal' }],
  },
  {
    vendor: 'kasada',
    markers: [
      { in: 'html', pattern: /window\.kpsdk\s*=|kpsdk\.(now|scriptstart)/, weight: 10 },
      { in: 'html', pattern: /\/ips\.js\?/, weight: 3 },
      // The challenge script is served by the protected site under two UUIDs (…/<uuid>/<uuid>/ips.js) onto a
      // near-blank page, often with status 200 or 429 and no inline KPSDK object.
      { in: 'html', pattern: /\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/(ips|p)\.js/, weight: 10, maxTextChars: 300 },
      { in: 'html', pattern: /x-kpsdk-(ct|im|cd)=/, weight: 3 },
      { in: 'header', header: 'x-kpsdk-ct', pattern: /./, weight: 3 },
    ],
  },
  {
    vendor: 'anubis',
    markers: [
      // The challenge itself, as JSON in the head: only the challenge page carries it, and it counts at any length
      // because the page Anubis serves by default has status 200 and an explanation of over 1,000 characters, long
      // enough for the size rules to take it for an article.
      { in: 'html', pattern: tagAttributes('script', 0, 200, /\bid=["']?anubis_challenge\b/, 'id='), weight: 10, anyLength: true },
      { in: 'html', pattern: /anubis_challenge|\.within\.website\/x\/cmd\/anubis|id=["']anubis_/, weight: 10 },
      { in: 'text', pattern: /making sure you('| a)re not a bot/i, weight: 6 },
    ],
    // "Oh noes!" is its error page: a policy that denies the client, or an answer it refused. No challenge on it.
    kinds: [{ in: 'title', pattern: /^oh noes!?$/i, kind: 'refusal' }],
  },
  {
    // Queue-it's virtual waiting room: the page a queued visitor is redirected to, with its number in line and the
    // wait, served with 200. Ordinary pages of the same shops carry Queue-it's connector scripts: weak on purpose.
    vendor: 'queue_it',
    markers: [
      { in: 'html', pattern: /id=["']mainpart_(lbusersinlineaheadofyou|lbqueuenumber|lbwhichisin|divprogressbar|lbexpectedservicetime)["']/, weight: 10 },
      { in: 'html', pattern: anyOf(/queueit\.queue\.queueviewmodel/, tagAttributes('body', 0, 300, /data-pageid=["'](queue|before|prequeue)["']/, 'data-pageid=')), weight: 6 },
      { in: 'text', pattern: /you are now in line|(number of users|people) (in line )?ahead of you/i, weight: 4 },
      { in: 'html', pattern: /static\.queue-it\.net|\.queue-it\.net\/|data-queueit-c=/, weight: 2 },
    ],
    kind: 'waiting_room',
  },
  {
    // Its rate-limit and country blocks ("Your access to this site has been limited"), and its firewall's 403 for a
    // request a rule matched. That wording counts only on a page of the template's size, and needs the page's footer
    // (or the product's name) beside it: a support-forum post quoting the sentence is not the page.
    vendor: 'wordfence',
    markers: [
      { in: 'text', pattern: /your access to this site has been limited by the site owner/i, weight: 10 },
      { in: 'text', pattern: /a potentially unsafe operation has been detected in your request to this site/i, weight: 6, maxTextChars: 600 },
      { in: 'text', pattern: /generated by wordfence at /i, weight: 4, maxTextChars: 600 },
      { in: 'html', pattern: /wordfence/, weight: 2 },
    ],
    kind: 'refusal',
  },
  {
    // Bot Manager (ShieldSquare) serves a captcha; AppWall and its cloud WAF a block page with a case number to quote.
    vendor: 'radware',
    markers: [
      { in: 'html', pattern: /validate\.perfdrive\.com|captcha\.perfdrive\.com|shieldsquare\.com\/[^"'\s<>]{0,300}captcha/, weight: 10 },
      { in: 'title', pattern: /radware (bot manager )?captcha|shieldsquare captcha/i, weight: 8 },
      { in: 'text', pattern: /unauthorized activity has been detected/i, weight: 6, maxTextChars: 800 },
      { in: 'text', pattern: /case number:?\s*\d{6,}/i, weight: 4, maxTextChars: 800 },
      { in: 'title', pattern: /^unauthorized request blocked$/i, weight: 4 },
      { in: 'html', pattern: /cloudwebsec@radware\.com/, weight: 4 },
      { in: 'header', header: 'x-sl-compstate', pattern: /./, weight: 4 },
    ],
    kind: 'captcha',
    kinds: [
      { in: 'text', pattern: /unauthorized activity has been detected/i, kind: 'refusal' },
      { in: 'title', pattern: /^unauthorized request blocked$/i, kind: 'refusal' },
    ],
  },
  {
    vendor: 'amazon',
    markers: [
      { in: 'html', pattern: /\/errors\/validatecaptcha|amzn-captcha|opfcaptcha/, weight: 6 },
      { in: 'text', pattern: /sorry,? we just need to make sure you'?re not a robot|type the characters you see in this image|enter the characters you see below|click the button below to continue shopping/i, weight: 6 },
      // The validator form's hidden fields.
      { in: 'html', pattern: /name=["']?amzn-r["']?/, weight: 4 },
      { in: 'title', pattern: /^robot check$/i, weight: 6 },
    ],
    kind: 'captcha',
  },
  {
    vendor: 'google',
    markers: [
      { in: 'text', pattern: /our systems have detected unusual traffic from your computer network/i, weight: 10 },
      { in: 'html', pattern: /id=["']recaptcha["'][^>]{0,500}class=["']g-recaptcha/, weight: 3 },
      { in: 'html', pattern: /id=["']infodiv0?["']/, weight: 3 },
    ],
    kind: 'captcha',
  },
  ...WAF_AND_HOSTING_SIGNATURES,
  {
    // A page that IS a captcha gate: a widget plus a "prove you are human" title or text, on a small page. The
    // widget is required (title + text alone stay below the threshold); a contact form has the widget but not
    // the words. The vendor is the widget's.
    vendor: 'captcha_gate',
    notOnDataForms: true,
    markers: [
      // One marker for every kind of widget, so two widgets never add up to a gate without the words.
      { in: 'html', pattern: anyOf(new RegExp(String.raw`class=["'][^"']{0,300}\b(g-recaptcha|h-captcha|cf-turnstile|frc-captcha|smart-captcha)\b|recaptcha\/(api|enterprise)\.js|hcaptcha\.com\/1\/api\.js|challenges\.cloudflare\.com\/turnstile|friendlycaptcha|static\.geetest\.com|initgeetest|client-api\.arkoselabs\.com|smartcaptcha\.yandexcloud\.net`), IMAGE_CAPTCHA), weight: 6 },
      { in: 'title', pattern: new RegExp(`${GATE_TITLES.source}|${LOCALISED_GATE_TITLES.source}`, 'i'), weight: 4 },
      { in: 'text', pattern: new RegExp(`${CAPTCHA_PHRASES.source}|${LOCALISED_CAPTCHA_PHRASES.source}`, 'i'), weight: 4 },
    ],
    // A person solves it, save the widgets that pass a real browser by themselves (the first that matches decides, in
    // the order CAPTCHA_WIDGETS names the vendor): Turnstile's managed and invisible modes, Friendly Captcha's proof
    // of work, reCAPTCHA's invisible badge and v3 score (api.js rendered with a site key).
    kind: 'captcha',
    kinds: [
      { in: 'html', pattern: /h-captcha|hcaptcha\.com/, kind: 'captcha' },
      { in: 'html', pattern: /data-size=["']invisible["']|recaptcha\/(api|enterprise)\.js\?[^"']{0,200}\brender=(?!explicit\b|onload\b)[\w-]{20,}/, kind: 'interstitial' },
      { in: 'html', pattern: /g-recaptcha|recaptcha\//, kind: 'captcha' },
      { in: 'html', pattern: /cf-turnstile|challenges\.cloudflare\.com\/turnstile|frc-captcha|friendlycaptcha/, kind: 'interstitial' },
    ],
  },
];

/** Which captcha widget a generic gate uses, for `blockVendor`. */
export const CAPTCHA_WIDGETS: readonly [RegExp, string][] = [
  [/h-captcha|hcaptcha\.com/, 'hcaptcha'],
  [/g-recaptcha|recaptcha\//, 'recaptcha'],
  [/cf-turnstile|challenges\.cloudflare\.com\/turnstile/, 'turnstile'],
  [/frc-captcha|friendlycaptcha/, 'friendlycaptcha'],
  [/geetest/, 'geetest'],
  [/arkoselabs|funcaptcha/, 'arkose'],
  [/smart-captcha|smartcaptcha/, 'yandex_smartcaptcha'],
];
