import { describe, expect, it } from 'vitest';
import { MAX_JAR_COOKIES, SESSION_COOKIE_TTL_MS, applySetCookie, cookieHeaderOf, parseJar } from './session-cookies.js';

const NOW = Date.UTC(2026, 10, 26, 12);

describe('session cookie jars', () => {
  it('keeps what a site set and sends it back, with expiry from Max-Age, Expires or the session default', () => {
    const jar = applySetCookie({}, 'sid=abc; Path=/; HttpOnly\ncf_clearance=xyz; Max-Age=3600\nold=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT\nlater=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT', NOW, true);
    expect(Object.keys(jar).sort()).toEqual(['cf_clearance', 'later', 'sid']);
    expect(jar.sid!.expiresAt).toBe(NOW + SESSION_COOKIE_TTL_MS);
    expect(jar.cf_clearance!.expiresAt).toBe(NOW + 3_600_000);
    expect(cookieHeaderOf(jar, NOW, true)).toBe('sid=abc; cf_clearance=xyz; later=2');
    expect(cookieHeaderOf(jar, NOW + 3_600_001, false)).toBe('sid=abc; later=2');
  });

  it('removes a cookie the site expires, skips malformed lines and caps the jar', () => {
    let jar = applySetCookie({}, 'sid=abc', NOW, false);
    jar = applySetCookie(jar, 'sid=; Max-Age=0\n=novalue\nbad name=x\nok=1', NOW, false);
    expect(jar).toEqual({ ok: { value: '1', expiresAt: NOW + SESSION_COOKIE_TTL_MS } });
    const many = Array.from({ length: MAX_JAR_COOKIES + 5 }, (_, i) => `c${i}=v; Max-Age=${1000 + i}`).join('\n');
    const capped = applySetCookie({}, many, NOW, true);
    expect(Object.keys(capped)).toHaveLength(MAX_JAR_COOKIES);
    expect(capped.c0).toBeUndefined();
    expect(cookieHeaderOf({}, NOW, true)).toBeUndefined();
  });

  it('sends a Secure cookie only over https, and takes one only from an https answer', () => {
    const jar = applySetCookie({}, 'sid=abc; Path=/; Secure; HttpOnly\nlang=en; Path=/', NOW, true);
    expect(cookieHeaderOf(jar, NOW, true)).toBe('sid=abc; lang=en');
    // An http:// request of the same site must not carry it in clear (RFC 6265 §5.4: secure-only cookies).
    expect(cookieHeaderOf(jar, NOW, false)).toBe('lang=en');
    // An http:// answer cannot set one (RFC 6265bis §5.7): it would shadow the site's own, its Secure flag a lie.
    expect(applySetCookie(jar, 'sid=forged; Secure\nlang=fr', NOW, false)).toEqual({ ...jar, lang: { value: 'fr', expiresAt: NOW + SESSION_COOKIE_TTL_MS } });
    expect(applySetCookie(jar, 'sid=plain\nsid=; Max-Age=0', NOW, false).sid).toEqual(jar.sid);
    // Kept through Redis: a stored jar reads back with its Secure flags.
    expect(cookieHeaderOf(parseJar(JSON.stringify(jar)), NOW, false)).toBe('lang=en');
  });

  it('reads a stored jar back, and anything else as empty', () => {
    const jar = applySetCookie({}, 'a=1', NOW, true);
    expect(parseJar(JSON.stringify(jar))).toEqual(jar);
    for (const bad of [null, '', 'not json', '[1]', '{"a":{"value":3}}']) expect(parseJar(bad)).toEqual({});
  });
});
