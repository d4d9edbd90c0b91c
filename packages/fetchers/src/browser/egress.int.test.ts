import { createServer, type Server } from 'node:http';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redirect, sleep, startTestServer, staticArticle, type Routes, type TestServer } from '@crawler/testkit';
import { createDefaultRegistry, type FetcherRegistry } from '../registry.js';
import { createPlaywrightFetcher, type PlaywrightFetcher } from './playwright-fetcher.js';
import { FetchError } from '../errors.js';
import { REFUSED_MESSAGE } from '../http/ssrf.js';

/**
 * The "internal network": a second loopback address that no page may reach. It counts TCP connections, not only
 * requests, so a WebSocket handshake, a TLS ClientHello or a request cut short still counts.
 */
interface Inner {
  port: number;
  connections: number;
  requests: string[];
  close(): Promise<void>;
}

async function startInner(): Promise<Inner> {
  const inner: Inner = { port: 0, connections: 0, requests: [], close: async () => undefined };
  const server: Server = createServer((req, res) => {
    inner.requests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html', 'content-disposition': req.url?.includes('file') ? 'attachment; filename=x.bin' : 'inline' });
    res.end('<h1>internal secret</h1>');
  });
  server.on('connection', () => inner.connections++);
  server.on('upgrade', (req, socket) => {
    inner.requests.push(`upgrade ${req.url}`);
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  inner.port = (server.address() as AddressInfo).port;
  inner.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return inner;
}

/** Every way a page can make a browser send something, pointed at the inner address directly and through 302s. */
function hostilePage(inner: string, innerByName: string, stunPort: number): string {
  const targets = [`${inner}/direct`, '/bounce', '/bounce-https', `${innerByName}/by-name`, 'http://[::ffff:127.0.0.1]:' + new URL(inner).port + '/mapped'];
  return `<!doctype html><html><head><title>hostile</title>
<link rel="prefetch" href="${inner}/prefetch"><link rel="stylesheet" href="/bounce-css">
<script src="/bounce-script"></script>
</head><body><h1>An ordinary looking page</h1>
<iframe src="${inner}/iframe"></iframe><iframe src="/bounce-frame"></iframe><iframe src="/refresher"></iframe>
<img src="${inner}/img.png"><img src="/bounce-img"><img src="/bounce-pixel">
<video src="${inner}/clip.mp4" autoplay></video>
<iframe srcdoc="<a id=d href='${inner}/file.bin' download>f</a><script>document.getElementById('d').click()</script>"></iframe>
<a id="dl-public" href="/download" download>file</a>
<a id="tab" href="${inner}/tab" target="_blank">tab</a>
<script>
  const tried = [];
  for (const t of ${JSON.stringify(targets)}) {
    tried.push(t);
    fetch(t).catch(() => {});
    fetch(t, { mode: 'no-cors', method: 'POST', body: 'x' }).catch(() => {});
    try { navigator.sendBeacon(t, 'beacon'); } catch {}
    try { new EventSource(t); } catch {}
    const x = new XMLHttpRequest(); x.open('GET', t); x.send();
  }
  for (const ws of ['${inner.replace('http', 'ws')}/ws', '${innerByName.replace('http', 'ws')}/ws', '${inner.replace('http:', 'wss:')}/wss']) {
    try { new WebSocket(ws); tried.push(ws); } catch {}
  }
  try {
    const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${stunPort}' }, { urls: 'turn:127.0.0.1:${stunPort}?transport=udp', username: 'u', credential: 'p' }] });
    pc.createDataChannel('x');
    pc.createOffer().then((o) => pc.setLocalDescription(o));
  } catch {}
  window.open('${inner}/popup');
  window.open('/bounce-popup', '_blank', 'noopener');
  document.getElementById('tab').click();
  document.getElementById('dl-public').click();
  document.body.dataset.tried = String(tried.length);
</script></body></html>`;
}

/** The allow-listed "public" site: the hostile page, its redirects into the inner address, and a slow download. */
function siteRoutes(innerUrl: string, byName: string, stunPort: number, counters: { downloadStarted: number; downloadFinished: number }): Routes {
  return {
      '/hostile': { body: hostilePage(innerUrl, byName, stunPort) },
      '/bounce': redirect(`${innerUrl}/from-bounce`),
      '/bounce-https': redirect(`${innerUrl.replace('http:', 'https:')}/from-bounce-https`),
      '/bounce-css': redirect(`${innerUrl}/css`),
      '/bounce-script': redirect(`${innerUrl}/script`),
      '/bounce-frame': redirect(`${innerUrl}/frame`),
      '/bounce-img': redirect(`${innerUrl}/img`),
      '/bounce-pixel': redirect(`${byName}/pixel`),
      '/bounce-popup': redirect(`${innerUrl}/popup-bounced`),
      '/bounce-name': redirect(`${byName}/main-by-name`),
      '/self-nav': { body: `<p>going</p><script>setTimeout(() => { location.href = '${innerUrl}/self-nav'; }, 30)</script>` },
      '/refresher': { body: `<meta http-equiv="refresh" content="0;url=${innerUrl}/refreshed">` },
      '/download': async (_req, res) => {
        counters.downloadStarted++;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename=big.bin' });
        // 8 MiB, slowly: a browser that accepted downloads would keep reading it after the page was gone.
        for (let i = 0; i < 128 && !res.destroyed; i++) {
          await new Promise<void>((r) => res.write(Buffer.alloc(65_536), () => r()));
          await sleep(15);
        }
        if (!res.destroyed) {
          res.end();
          counters.downloadFinished++;
        }
      },
      '/': { body: staticArticle() },
    };
}

describe('browser egress guard: a hostile public page cannot reach a private address', () => {
  let inner: Inner;
  let site: TestServer;
  let stun: UdpSocket;
  let datagrams = 0;
  let registry: FetcherRegistry;
  const counters = { downloadStarted: 0, downloadFinished: 0 };

  beforeAll(async () => {
    inner = await startInner();
    stun = createSocket('udp4');
    stun.on('message', () => datagrams++);
    await new Promise<void>((r) => stun.bind(0, '127.0.0.1', r));
    const innerUrl = `http://127.0.0.1:${inner.port}`;
    const byName = `http://localhost:${inner.port}`;
    // 127.0.0.2 is allow-listed: the stand-in for a public site.
    site = await startTestServer(siteRoutes(innerUrl, byName, stun.address().port, counters), { host: '127.0.0.2' });
    registry = createDefaultRegistry({ allowHosts: ['127.0.0.2'], browser: { maxPages: 2 } });
  });

  afterAll(async () => {
    await registry.closeAll();
    await site.close();
    await inner.close();
    stun.close();
  });

  it.each(['playwright', 'playwright_stealth'])('%s: fetch, XHR, beacons, frames, images, WebSockets, WebRTC, popups and downloads make zero connections', async (name) => {
    inner.connections = 0;
    inner.requests.length = 0;
    datagrams = 0;
    site.resetHits();
    const fetcher = registry.get(name) as PlaywrightFetcher;
    const refusedBefore = fetcher.pool.stats().egress?.refused ?? 0;
    const result = await fetcher.fetch({ url: site.url('/hostile') });
    expect(result.status).toBe(200);
    // The attacks really ran: the page's script got to the end, and its redirects were asked for.
    expect(result.text).toMatch(/data-tried="(\d+)"/);
    expect(Number(result.text!.match(/data-tried="(\d+)"/)![1])).toBeGreaterThanOrEqual(7);
    expect(site.hits('/bounce')).toBeGreaterThan(0);
    expect(site.hits('/bounce-frame')).toBeGreaterThan(0);
    // Popups and downloads would go on after the fetch returned: give them the time to.
    await sleep(1500);
    expect(inner.requests).toEqual([]);
    expect(inner.connections).toBe(0);
    expect(datagrams).toBe(0);
    expect(fetcher.pool.stats().egress!.refused).toBeGreaterThan(refusedBefore + 5);
    expect(fetcher.pool.stats().inFlight).toBe(0);
    // The download from the allowed site was cut, not read to the end behind the page's back.
    expect(counters.downloadStarted).toBeGreaterThan(0);
    expect(counters.downloadFinished).toBe(0);
  }, 60_000);

  it('refuses a main-frame redirect (plain HTTP, HTTPS, by name) into private space, naming no address', async () => {
    const pw = registry.get('playwright');
    for (const path of ['/bounce', '/bounce-https', '/bounce-name']) {
      const err = (await pw.fetch({ url: site.url(path) }).catch((e: unknown) => e)) as FetchError;
      expect(err).toBeInstanceOf(FetchError);
      expect(err.code).toBe('blocked_address');
      expect(err.message).toBe(REFUSED_MESSAGE);
      expect(err.message).not.toMatch(/127\.0\.0\.1|loopback|localhost/);
    }
    // A script sending the page into private space is the page's own doing: refused, and the page is what it rendered.
    const selfNav = await pw.fetch({ url: site.url('/self-nav') });
    expect(selfNav.status).toBe(200);
    expect(selfNav.text).toContain('going');
    const direct = (await pw.fetch({ url: `http://127.0.0.1:${inner.port}/` }).catch((e: unknown) => e)) as FetchError;
    expect(direct.code).toBe('blocked_address');
    expect(inner.connections).toBe(0);
    // The allowed site itself still renders.
    expect((await pw.fetch({ url: site.url('/') })).status).toBe(200);
  }, 120_000);

  it('refuses to share a browser pool whose egress policy differs', () => {
    const pool = (registry.get('playwright') as PlaywrightFetcher).pool;
    expect(() => createPlaywrightFetcher({ allowPrivateNetworks: true }, { pool })).toThrow(/address policy/);
  });
});

describe('the same hostile page without the guard (control: the attacks are real)', () => {
  it('reaches the private address', async () => {
    const inner = await startInner();
    const innerUrl = `http://127.0.0.1:${inner.port}`;
    const site = await startTestServer(siteRoutes(innerUrl, `http://localhost:${inner.port}`, 9, { downloadStarted: 0, downloadFinished: 0 }), { host: '127.0.0.2' });
    const open = createPlaywrightFetcher({ allowPrivateNetworks: true });
    try {
      await open.fetch({ url: site.url('/hostile') });
      await sleep(500);
      expect(inner.connections).toBeGreaterThan(0);
      // Direct, through a 302, by a name that resolves inward, through an IPv4-mapped literal, by WebSocket, as a download.
      expect(inner.requests).toEqual(expect.arrayContaining(['/direct', '/from-bounce', '/frame', '/by-name', '/mapped', 'upgrade /ws', '/file.bin']));
    } finally {
      await open.close();
      await site.close();
      await inner.close();
    }
  }, 60_000);
});
