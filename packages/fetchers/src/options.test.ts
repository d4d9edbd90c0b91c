import { rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { createTestCa } from '@crawler/testkit';
import { chromiumCaArgs, isNodeRoot, withoutNodeRoots } from './options.js';

describe('a private CA for the fetchers (NODE_EXTRA_CA_CERTS)', () => {
  it("keeps out the public roots Node already trusts: a file that is the system bundle gives Chromium no waiver for them", () => {
    const ca = createTestCa();
    const publicRoots = rootCertificates.slice(0, 40);
    expect(withoutNodeRoots([...publicRoots, ca.cert])).toEqual([ca.cert]);
    expect(chromiumCaArgs(publicRoots)).toEqual([]);
    expect(chromiumCaArgs([...publicRoots, ca.cert])).toHaveLength(1);
    expect(chromiumCaArgs([...publicRoots, ca.cert])[0]!.split(',')).toHaveLength(1);
  });

  it('knows a public root by its bytes, however the file wraps its lines', () => {
    const root = rootCertificates[0]!;
    const body = root.replace(/-----[^-]+-----|\s+/g, '');
    const rewrapped = `-----BEGIN CERTIFICATE-----\r\n${body.match(/.{1,76}/g)!.join('\r\n')}\r\n-----END CERTIFICATE-----`;
    expect(rewrapped).not.toBe(root);
    expect(isNodeRoot(rewrapped)).toBe(true);
    expect(isNodeRoot(createTestCa().cert)).toBe(false);
  });
});
