/**
 * A session's cookie jar for plain HTTP, as plain data: what a site set through one exit identity is sent back only
 * through that identity (a clearance or a session cookie earned from one address is not another's). Host-wide:
 * cookies are kept per site and session, their Path and Domain attributes are not told apart (one site, one jar).
 */

/** One kept cookie: its value and when it expires (epoch ms; null: with the session). */
export interface JarCookie {
  value: string;
  expiresAt: number | null;
  /** Set with `Secure`: sent only over https. Absent: sent over either. */
  secure?: true;
}

/** A jar: cookie name → cookie. */
export type CookieJar = Record<string, JarCookie>;

/** Longest a cookie without Max-Age/Expires is kept, so a jar never grows stale for ever. @defaultValue 1 day */
export const SESSION_COOKIE_TTL_MS = 24 * 3_600_000;
/** Cookies one jar keeps at most (a site that sets hundreds is not one we must mirror). */
export const MAX_JAR_COOKIES = 50;
/** Longest cookie value kept, in characters. */
export const MAX_COOKIE_VALUE_CHARS = 4096;

/**
 * Fold a response's Set-Cookie lines (as the fetchers join them, with "\n") into `jar` at `nowMs`: a cookie with
 * Max-Age ≤ 0 or an Expires in the past is removed, one without either is kept for {@link SESSION_COOKIE_TTL_MS}.
 * Malformed lines are skipped. A `Secure` cookie is taken only from an https answer (`fromHttps`), as browsers do: over
 * http:// anyone on the path could plant one that shadows the site's own. Returns a new jar.
 */
export function applySetCookie(jar: CookieJar, setCookie: string | undefined, nowMs: number, fromHttps: boolean): CookieJar {
  const out: CookieJar = { ...jar };
  for (const line of (setCookie ?? '').split('\n')) {
    const [pair, ...attrs] = line.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (!pair || eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name) || value.length > MAX_COOKIE_VALUE_CHARS || /[\r\n;]/.test(value)) continue;
    let expiresAt: number | null = nowMs + SESSION_COOKIE_TTL_MS;
    let secure = false;
    for (const attr of attrs) {
      const [k, ...v] = attr.split('=');
      const key = k?.trim().toLowerCase();
      const val = v.join('=').trim();
      if (key === 'secure') secure = true;
      else if (key === 'max-age' && /^-?\d+$/.test(val)) expiresAt = nowMs + Number(val) * 1000;
      else if (key === 'expires' && expiresAt === nowMs + SESSION_COOKIE_TTL_MS) {
        const t = Date.parse(val);
        if (Number.isFinite(t)) expiresAt = t;
      }
    }
    // Nor may an http:// answer replace or delete a Secure one.
    if (!fromHttps && (secure || out[name]?.secure)) continue;
    if (expiresAt !== null && expiresAt <= nowMs) delete out[name];
    else out[name] = secure ? { value, expiresAt, secure } : { value, expiresAt };
  }
  const names = Object.keys(out);
  // Past the cap, the cookies closest to expiring go first.
  if (names.length > MAX_JAR_COOKIES) {
    names.sort((a, b) => (out[a]!.expiresAt ?? Infinity) - (out[b]!.expiresAt ?? Infinity));
    for (const n of names.slice(0, names.length - MAX_JAR_COOKIES)) delete out[n];
  }
  return out;
}

/**
 * The Cookie header a jar sends at `nowMs` on a request over https (`overHttps`) or plain http, or undefined when it
 * sends none: expired cookies are left out, and `Secure` ones from a plain-http request (they would travel in clear).
 */
export function cookieHeaderOf(jar: CookieJar, nowMs: number, overHttps: boolean): string | undefined {
  const live = Object.entries(jar).filter(([, c]) => (c.expiresAt === null || c.expiresAt > nowMs) && (overHttps || c.secure !== true));
  return live.length > 0 ? live.map(([n, c]) => `${n}=${c.value}`).join('; ') : undefined;
}

/** A stored jar read back; anything that is not a jar reads as empty. */
export function parseJar(raw: string | null | undefined): CookieJar {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
    const out: CookieJar = {};
    for (const [n, c] of Object.entries(v as Record<string, unknown>)) {
      const cookie = c as Partial<JarCookie>;
      if (typeof cookie?.value === 'string' && (cookie.expiresAt === null || typeof cookie.expiresAt === 'number')) {
        out[n] = cookie.secure === true ? { value: cookie.value, expiresAt: cookie.expiresAt, secure: true } : { value: cookie.value, expiresAt: cookie.expiresAt };
      }
    }
    return out;
  } catch {
    return {};
  }
}
