import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';
import type { getDomain as GetDomain } from 'tldts';
import { InvalidUrlError } from '../contracts/errors.js';
import { frontierKey } from './crawl-url.js';
import { normalizePercentEncoding } from '../url/normalize-url.js';

/**
 * Which URLs a crawl may follow, relative to its seeds: the same registrable domain (`same-site`, by the Public Suffix
 * List: `a.example.co.uk` and `b.example.co.uk` are one site, `a.github.io` and `b.github.io` are not), the same
 * host, the same origin (scheme, host and port), or anything (`all`).
 */
export const CRAWL_SCOPES = ['same-site', 'same-host', 'same-origin', 'all'] as const;
export type CrawlScope = (typeof CRAWL_SCOPES)[number];

/** A crawl's URL rules. Every condition must hold (AND): in the scope of some seed, matching an include, no exclude. */
export interface ScopeRules {
  scope: CrawlScope;
  /** Canonical seed URLs the scope is relative to. */
  seeds: readonly string[];
  /** A URL must match at least one of these (when there are any): globs, or regexes written `re:<pattern>`. */
  include?: readonly string[];
  /** A URL matching any of these is out of scope. */
  exclude?: readonly string[];
}

/** Why a URL is out of scope, or null when it is in. */
export type ScopeVerdict = null | 'scope' | 'include' | 'exclude';

/** A compiled {@link ScopeRules}. */
export interface ScopeMatcher {
  /** null when `url` (canonical, absolute) may be crawled; otherwise which rule refused it. */
  check(url: string): ScopeVerdict;
}

// The Public Suffix List (tldts, ~80 ms to load) loads on first use: a crawl that never asks for a site (no
// --scope same-site, one queue shard) never pays for it.
let getDomain: typeof GetDomain | undefined;

/** The registrable domain of a host (by the Public Suffix List), or the host itself for IPs, `localhost` and the like. */
export function siteOf(hostname: string): string {
  const host = hostname.toLowerCase();
  return registrableDomainOf(host) ?? host;
}

/**
 * The registrable domain of a host by the Public Suffix List (private domains included), or null for a public suffix
 * itself (`co.uk`, `github.io`), an IP, `localhost` and the like: what a cookie's `Domain` must be, or be under.
 */
export function registrableDomainOf(hostname: string): string | null {
  getDomain ??= (createRequire(import.meta.url)('tldts') as { getDomain: typeof GetDomain }).getDomain;
  return getDomain(hostname.toLowerCase(), { allowPrivateDomains: true });
}

function keyOf(scope: CrawlScope, u: URL): string {
  switch (scope) {
    case 'same-site':
      return siteOf(u.hostname);
    case 'same-host':
      return u.hostname;
    case 'same-origin':
      return u.origin;
    case 'all':
      return '';
  }
}

/** Compile the rules once per crawl; `check` then costs a URL parse and a few regex tests. */
export function compileScope(rules: ScopeRules): ScopeMatcher {
  const allowed = new Set<string>();
  for (const seed of rules.seeds) {
    let u: URL;
    try {
      u = new URL(seed);
    } catch (cause) {
      throw new InvalidUrlError(`seed is not an absolute URL: ${seed}`, { url: seed, cause });
    }
    allowed.add(keyOf(rules.scope, u));
  }
  const include = (rules.include ?? []).map(compileUrlPattern);
  const exclude = (rules.exclude ?? []).map(compileUrlPattern);
  return {
    check(url) {
      if (rules.scope !== 'all') {
        let u: URL;
        try {
          u = new URL(url);
        } catch {
          return 'scope';
        }
        if (!allowed.has(keyOf(rules.scope, u))) return 'scope';
      }
      // `/tag/x/` and `/tag/x` are one page to the frontier, so to the patterns too: `/tag/*` matches both spellings
      // (WordPress links end in "/"), and whichever a crawl finds first gets the same answer.
      const key = frontierKey(url);
      const matches = (re: RegExp): boolean => re.test(url) || (key !== url && re.test(key));
      if (include.length > 0 && !include.some(matches)) return 'include';
      if (exclude.some(matches)) return 'exclude';
      return null;
    },
  };
}

const GLOB_CHARS = /[*?]/;
const DEFAULT_PORT: Record<string, string> = { http: ':80', https: ':443' };

/**
 * A glob written as a user types a URL, in the spelling the frontier's canonical URLs have: scheme and host in lower
 * case, an IDN host in punycode, no default port, percent-escapes normalized and non-ASCII characters escaped as
 * UTF-8. `https://Example.com/~a/**` must match `https://example.com/%7Ea/x`, which is how the page is stored.
 */
function canonicalPattern(pattern: string): string {
  let rest = pattern;
  let prefix = '';
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/]*)/.exec(pattern);
  if (m) {
    const scheme = m[1]!.toLowerCase();
    let authority = m[2]!.toLowerCase();
    if (authority.endsWith(DEFAULT_PORT[scheme] ?? '\0')) authority = authority.slice(0, -DEFAULT_PORT[scheme]!.length);
    // Label by label, so a glob label (`*.bücher.de`) leaves the others convertible.
    authority = authority
      .split('.')
      .map((label) => (GLOB_CHARS.test(label) || !/[^\x00-\x7f]/.test(label) ? label : domainToASCII(label) || label))
      .join('.');
    prefix = `${scheme}://${authority}`;
    rest = pattern.slice(m[0].length);
  }
  const escaped = normalizePercentEncoding(rest).replace(/[^\x00-\x7f]+/g, (s) => encodeURIComponent(s));
  return prefix + escaped;
}

/**
 * A URL pattern: `re:<regex>` is a regular expression searched in the URL; anything else is a glob matched against
 * the whole URL, or against path and query when it starts with `/`. In globs `**` is any run of characters, `*` any
 * run without `/`, `?` one character other than `/`; everything else is literal. A glob is first written as the
 * frontier writes URLs (host in lower case and punycode, escapes normalized). Throws RangeError for a bad regex.
 */
export function compileUrlPattern(pattern: string): RegExp {
  if (pattern.startsWith('re:')) {
    try {
      return new RegExp(pattern.slice(3));
    } catch (err) {
      throw new RangeError(`invalid regex in URL pattern ${JSON.stringify(pattern)}: ${(err as Error).message}`);
    }
  }
  pattern = canonicalPattern(pattern);
  let src = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        src += '.*';
        i++;
      } else src += '[^/]*';
    } else if (c === '?') src += '[^/]';
    else src += c.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  // A path glob matches after the origin: "scheme://host[:port]" is skipped.
  return new RegExp(pattern.startsWith('/') ? `^[a-z][a-z0-9+.-]*://[^/]+${src}$` : `^${src}$`);
}
