import type { Heuristic } from '../contracts/names.js';
import type { ResponseSnapshot, ValidationResult } from './types.js';
import { validateResponse } from './validate-response.js';

/** Scripts above this share of the HTML's bytes mark `high_script_ratio`: a page that is mostly code. */
export const HIGH_SCRIPT_RATIO = 0.5;

/** Server families recognised from the Server header (and a few CDN headers that replace it). Data. */
export const SERVER_FAMILIES: readonly { family: string; header: string; pattern: RegExp }[] = [
  { family: 'cloudflare', header: 'server', pattern: /cloudflare/i },
  { family: 'cloudflare', header: 'cf-ray', pattern: /./ },
  { family: 'openresty', header: 'server', pattern: /openresty/i },
  { family: 'nginx', header: 'server', pattern: /nginx/i },
  { family: 'apache', header: 'server', pattern: /apache/i },
  { family: 'iis', header: 'server', pattern: /microsoft-iis/i },
  { family: 'litespeed', header: 'server', pattern: /litespeed/i },
  { family: 'caddy', header: 'server', pattern: /caddy/i },
  { family: 'envoy', header: 'server', pattern: /envoy/i },
  { family: 'google', header: 'server', pattern: /^(gws|gse|esf|sffe|google frontend)/i },
  { family: 'akamai', header: 'server', pattern: /akamai/i },
  { family: 'cloudfront', header: 'server', pattern: /cloudfront/i },
  { family: 'cloudfront', header: 'x-amz-cf-id', pattern: /./ },
  { family: 'amazons3', header: 'server', pattern: /amazons3/i },
  { family: 'varnish', header: 'via', pattern: /varnish/i },
  { family: 'fastly', header: 'x-served-by', pattern: /^cache-/i },
  { family: 'vercel', header: 'server', pattern: /vercel/i },
  { family: 'netlify', header: 'server', pattern: /netlify/i },
  { family: 'github', header: 'server', pattern: /github\.com/i },
  { family: 'sucuri', header: 'server', pattern: /sucuri|cloudproxy/i },
  { family: 'ddos_guard', header: 'server', pattern: /ddos-guard/i },
  { family: 'imperva', header: 'x-cdn', pattern: /incapsula|imperva/i },
];

/**
 * The post-fetch heuristics of a response: status_<code>, server_<family>,
 * has_captcha, block_vendor, has_spa, spa_framework, empty_body (HTML only), high_script_ratio, has_paywall and
 * content_family. Pass the validation when you already have it, to parse the body once.
 */
export function extractResponseHeuristics(r: ResponseSnapshot, v: ValidationResult = validateResponse(r)): Heuristic[] {
  const headers: Record<string, string> = {};
  for (const [k, val] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = String(val);
  const out: Heuristic[] = [];
  const push = (type: string, value = 'true') => {
    if (!out.some((h) => h.type === type)) out.push({ type, value });
  };
  if (Number.isInteger(r.status) && r.status >= 100 && r.status <= 999) push(`status_${r.status}`);
  for (const s of SERVER_FAMILIES) {
    const value = headers[s.header];
    if (value !== undefined && s.pattern.test(value)) push(`server_${s.family}`);
  }
  if (v.blockType === 'blocked_captcha') push('has_captcha');
  if (v.isBlocked && v.blockVendor) push('block_vendor', v.blockVendor);
  if (v.hasSpa) push('has_spa');
  if (v.hasSpa && v.framework) push('spa_framework', v.framework);
  if (v.isHtml && v.isEmpty) push('empty_body');
  if (v.isHtml && v.scriptRatio > HIGH_SCRIPT_RATIO) push('high_script_ratio');
  if (v.hasPaywall) push('has_paywall');
  push('content_family', v.contentFamily);
  return out;
}
