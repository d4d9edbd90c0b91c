import { describe, expect, it } from 'vitest';
import { FingerprintGenerator } from 'fingerprint-generator';
import { alignFingerprintVersion, drawFingerprint } from './stealth.js';

describe('alignFingerprintVersion', () => {
  it('rewrites the generated Chrome version to the running one everywhere it shows', () => {
    const generator = new FingerprintGenerator({ browsers: [{ name: 'chrome' }], devices: ['desktop'], operatingSystems: ['linux'] });
    const fp = generator.getFingerprint();
    const generated = fp.fingerprint.navigator.userAgent.match(/Chrome\/(\d+)/)?.[1];
    expect(generated).toBeDefined();
    const real = String(Number(generated) + 9) + '.0.1234.56';
    const aligned = alignFingerprintVersion(fp, real);
    const major = real.split('.')[0];
    expect(aligned.fingerprint.navigator.userAgent).toContain(`Chrome/${major}.0.0.0`);
    expect(aligned.fingerprint.navigator.userAgent).not.toContain(`Chrome/${generated}.`);
    // Generated fingerprints differ run to run (some carry no client-hint brands): check every real brand there is.
    const brands = (aligned.fingerprint.navigator.userAgentData as { brands?: { brand: string; version: string }[] } | undefined)?.brands ?? [];
    for (const b of brands) if (!/not.?a.?brand/i.test(b.brand)) expect(b.version).toBe(major);
    if (aligned.headers['sec-ch-ua']) {
      expect(aligned.headers['sec-ch-ua']).toContain(`v="${major}"`);
      expect(aligned.headers['sec-ch-ua']).not.toContain(`v="${generated}"`);
    }
    expect(aligned.headers['user-agent']).toContain(`Chrome/${major}.`);
    // Everything else of the fingerprint is kept.
    expect(aligned.fingerprint.screen).toEqual(fp.fingerprint.screen);
  });

  it('gives every real brand the running version even when the generator disagreed with its own user agent', () => {
    const generator = new FingerprintGenerator({ browsers: [{ name: 'chrome' }], devices: ['desktop'], operatingSystems: ['linux'] });
    const fp = generator.getFingerprint();
    const generated = Number(fp.fingerprint.navigator.userAgent.match(/Chrome\/(\d+)/)?.[1]);
    // The generator sometimes emits brands one version off its user agent: force that case.
    const uaData = fp.fingerprint.navigator.userAgentData as { brands: { brand: string; version: string }[] };
    uaData.brands = [
      { brand: 'Not A(Brand', version: '8' },
      { brand: 'Chromium', version: String(generated + 1) },
      { brand: 'Google Chrome', version: String(generated + 1) },
    ];
    // Generated header sets do not always carry sec-ch-ua (a CI run drew one without): give it one, one version off too.
    fp.headers['sec-ch-ua'] = `"Not A(Brand";v="8", "Chromium";v="${generated + 1}", "Google Chrome";v="${generated + 1}"`;
    const aligned = alignFingerprintVersion(fp, `${generated + 20}.0.7000.1`);
    const brands = (aligned.fingerprint.navigator.userAgentData as { brands: { brand: string; version: string }[] }).brands;
    expect(brands).toEqual([
      { brand: 'Not A(Brand', version: '8' },
      { brand: 'Chromium', version: String(generated + 20) },
      { brand: 'Google Chrome', version: String(generated + 20) },
    ]);
    expect(aligned.headers['sec-ch-ua']).toBe(`"Not A(Brand";v="8", "Chromium";v="${generated + 20}", "Google Chrome";v="${generated + 20}"`);
  });

  it('does not invent a sec-ch-ua header the generated fingerprint did not have', () => {
    const generator = new FingerprintGenerator({ browsers: [{ name: 'chrome' }], devices: ['desktop'], operatingSystems: ['linux'] });
    const fp = generator.getFingerprint();
    const generated = Number(fp.fingerprint.navigator.userAgent.match(/Chrome\/(\d+)/)?.[1]);
    delete fp.headers['sec-ch-ua'];
    const aligned = alignFingerprintVersion(fp, `${generated + 3}.0.7000.1`);
    expect(aligned.headers).not.toHaveProperty('sec-ch-ua');
    expect(aligned.headers['user-agent'] ?? aligned.fingerprint.navigator.userAgent).toContain(`Chrome/${generated + 3}.`);
  });
});

describe('drawFingerprint', () => {
  it('redraws a generated fingerprint whose brands name HeadlessChrome or that has none (headless Chromium\'s own would show)', () => {
    const generator = new FingerprintGenerator({ browsers: [{ name: 'chrome' }], devices: ['desktop'], operatingSystems: ['linux'] });
    let branded = generator.getFingerprint();
    const brandsOf = (fp: typeof branded) => (fp.fingerprint.navigator.userAgentData as { brands?: { brand: string; version: string }[] }).brands;
    while (!brandsOf(branded)?.length || brandsOf(branded)!.some((b) => /headless/i.test(b.brand))) branded = generator.getFingerprint();
    const brandless = structuredClone(branded);
    delete (brandless.fingerprint.navigator.userAgentData as { brands?: unknown }).brands;
    const headless = structuredClone(branded);
    brandsOf(headless)!.push({ brand: 'HeadlessChrome', version: '140' });
    const draws = [brandless, headless, branded];
    let calls = 0;
    const drawn = drawFingerprint({ getFingerprint: () => draws[Math.min(calls++, draws.length - 1)]! } as never);
    expect(calls).toBe(3);
    expect(drawn).toBe(branded);
    // Real draws: every one carries brands.
    for (let i = 0; i < 200; i++) {
      const fp = drawFingerprint(generator);
      expect(brandsOf(fp)?.length).toBeGreaterThan(0);
      expect(brandsOf(fp)!.some((b) => /headless/i.test(b.brand))).toBe(false);
    }
  });
});
