import { createHash, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** A certificate and its private key, both PEM. */
export interface TestKeyPair {
  /** The certificate, PEM. */
  cert: string;
  /** Its private key, PEM (PKCS#8). */
  key: string;
}

/** What a leaf certificate is for, and when it is valid. */
export interface LeafSpec {
  /** DNS names and IP literals the certificate names (subjectAltName); the first is its common name too. */
  hosts: string[];
  /** Start of validity. @defaultValue one hour ago */
  notBefore?: Date;
  /** End of validity. @defaultValue one day from now */
  notAfter?: Date;
}

/** A certificate authority made for one test run: trust its `cert` and every leaf it issues verifies. */
export interface TestCa extends TestKeyPair {
  /** base64 SHA-256 of the CA's SubjectPublicKeyInfo (the form HPKP and Chromium's SPKI lists use). */
  readonly spkiSha256: string;
  /** Issue a leaf for `hosts`, signed by this CA. */
  issue(spec: LeafSpec): TestKeyPair;
}

const HOUR_MS = 3_600_000;

/**
 * Create a certificate authority at test time (RSA 2048, a few tens of milliseconds), so no key or certificate is
 * kept in the tree and none expires there. Two calls give two unrelated CAs: one trusted, one "unknown".
 */
export function createTestCa(commonName = 'crawler test CA'): TestCa {
  const ca = newKeyPair();
  const subject = [{ name: 'commonName', value: commonName }, { name: 'organizationName', value: 'crawler tests' }];
  const cert = certificate(ca.publicKey, subject, subject, new Date(Date.now() - HOUR_MS), new Date(Date.now() + 7 * 24 * HOUR_MS), [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(ca.privateKey, forge.md.sha256.create());
  const caPem = forge.pki.certificateToPem(cert);
  return {
    cert: caPem,
    key: ca.keyPem,
    spkiSha256: spkiSha256(caPem),
    issue(spec: LeafSpec): TestKeyPair {
      if (spec.hosts.length === 0) throw new RangeError('a leaf needs at least one host');
      const leaf = newKeyPair();
      const notBefore = spec.notBefore ?? new Date(Date.now() - HOUR_MS);
      const notAfter = spec.notAfter ?? new Date(Date.now() + 24 * HOUR_MS);
      const c = certificate(leaf.publicKey, [{ name: 'commonName', value: spec.hosts[0]! }], cert.subject.attributes, notBefore, notAfter, [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: spec.hosts.map((h) => (isIP(h) ? { type: 7, ip: h } : { type: 2, value: h })) },
        { name: 'authorityKeyIdentifier', keyIdentifier: cert.generateSubjectKeyIdentifier().getBytes() },
      ]);
      c.sign(ca.privateKey, forge.md.sha256.create());
      return { cert: forge.pki.certificateToPem(c), key: leaf.keyPem };
    },
  };
}

/** base64 SHA-256 of a PEM certificate's SubjectPublicKeyInfo. */
export function spkiSha256(certPem: string): string {
  const spki = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

function newKeyPair(): { publicKey: forge.pki.PublicKey; privateKey: forge.pki.rsa.PrivateKey; keyPem: string } {
  // Node's native generator: forge's pure-JS one takes seconds for RSA 2048.
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: forge.pki.publicKeyFromPem(publicKey), privateKey: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey, keyPem: privateKey };
}

function certificate(
  publicKey: forge.pki.PublicKey,
  subject: forge.pki.CertificateField[],
  issuer: forge.pki.CertificateField[],
  notBefore: Date,
  notAfter: Date,
  extensions: object[],
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // Positive (high bit clear) and random, so two leaves of one CA never share a serial.
  cert.serialNumber = '01' + randomBytes(15).toString('hex');
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject(subject);
  cert.setIssuer(issuer);
  cert.setExtensions(extensions);
  return cert;
}
