/** The sim web's HTTPS mode, read with Node's own TLS client: certificates, the plain-HTTP listener, HSTS, Secure cookies. */
import { get } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimWeb, type SimWeb } from './sim-web.js';

let web: SimWeb;

beforeAll(async () => {
  web = await startSimWeb({
    https: true,
    firstHost: '127.0.4.60',
    sites: [
      { kind: 'static', hsts: true },
      { kind: 'static', certificate: 'expired' },
      { kind: 'static', certificate: 'wrong_host' },
      { kind: 'static', plainHttp: 'downgrade' },
      { kind: 'interstitial', wallFamily: 'second_request' },
    ],
  });
});
afterAll(async () => {
  await web.close();
});

/** Status, the headers asked for, or the TLS error's code. */
function ask(url: string, ca: string | undefined): Promise<{ status?: number; headers?: Record<string, unknown>; error?: string }> {
  return new Promise((resolve) => {
    get(url, { ...(ca ? { ca } : {}) }, (res) => {
      res.resume();
      resolve({ status: res.statusCode!, headers: res.headers });
    }).on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

describe('sim web over HTTPS', () => {
  it('serves each site with a certificate its CA issued for its address, and only a client trusting the CA gets in', async () => {
    const [site] = web.sites;
    expect(site!.origin).toMatch(/^https:\/\/127\.0\.4\.60:\d+$/);
    expect(web.ca?.cert).toMatch(/BEGIN CERTIFICATE/);
    expect(await ask(site!.urls(1)[0]!, web.ca!.cert)).toMatchObject({ status: 200, headers: { 'strict-transport-security': 'max-age=31536000' } });
    expect(await ask(site!.urls(1)[0]!, undefined)).toEqual({ error: 'SELF_SIGNED_CERT_IN_CHAIN' });
    expect(site!.connections()).toBe(2);
  });

  it('presents an expired certificate or one for another host when asked to', async () => {
    expect(await ask(web.sites[1]!.urls(1)[0]!, web.ca!.cert)).toEqual({ error: 'CERT_HAS_EXPIRED' });
    expect(await ask(web.sites[2]!.urls(1)[0]!, web.ca!.cert)).toEqual({ error: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });

  it('redirects plain HTTP to HTTPS, or HTTPS to plain HTTP for a downgrading site', async () => {
    const [site, , , downgrading] = web.sites;
    const plain = await fetch(`${site!.plainOrigin}/page/3?x=1`, { redirect: 'manual' });
    expect([plain.status, plain.headers.get('location')]).toEqual([301, `${site!.origin}/page/3?x=1`]);
    expect((await ask(`${downgrading!.origin}/page/3`, web.ca!.cert)).headers?.location).toBe(`${downgrading!.plainOrigin}/page/3`);
    expect((await fetch(`${downgrading!.plainOrigin}/page/3`)).status).toBe(200);
    expect(downgrading!.stats().served).toBe(1);
  });

  it('sets its walls\' cookies Secure over HTTPS', async () => {
    const wall = web.sites[4]!;
    const res = await ask(wall.urls(1)[0]!, web.ca!.cert);
    expect(res.status).toBe(200);
    expect(res.headers?.['set-cookie']).toEqual([expect.stringMatching(/^sim_session=\w+; .*; Secure$/)]);
  });
});
