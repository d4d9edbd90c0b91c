import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { redirect } from './routes.js';
import type { Routes } from './server.js';

/**
 * What a page can try behind the crawler's back once its own document has rendered, each pointed into private
 * address space (the "internal network"), directly or through a 302 on the page's own, allowed, host.
 */
export const BACKGROUND_VARIANTS = [
  'download-302',
  'img',
  'script-src',
  'fetch-direct',
  'fetch-302',
  'iframe-302',
  'window-open',
  'websocket',
  'location-302',
  'location-https',
] as const;
export type BackgroundVariant = (typeof BACKGROUND_VARIANTS)[number];

/** The text every hostile page renders with its script: what must survive the page's background attempts. */
export const HOSTILE_RENDERED_TEXT = 'Rendered by the page script: quarterly figures and the full article body.';

function attempt(variant: BackgroundVariant, inner: string): string {
  const ws = inner.replace(/^http/, 'ws');
  switch (variant) {
    case 'download-302':
      return `const a = document.createElement('a'); a.href = '/bounce/file.bin'; a.download = 'file.bin'; document.body.appendChild(a); a.click();`;
    case 'img':
      return `const i = new Image(); i.src = '${inner}/pixel.png'; document.body.appendChild(i);`;
    case 'script-src':
      return `const s = document.createElement('script'); s.src = '${inner}/dev-tools.js'; document.head.appendChild(s);`;
    case 'fetch-direct':
      return `fetch('${inner}/api/metrics').catch(() => {});`;
    case 'fetch-302':
      return `fetch('/bounce/api').catch(() => {});`;
    case 'iframe-302':
      return `const f = document.createElement('iframe'); f.src = '/bounce/frame'; document.body.appendChild(f);`;
    case 'window-open':
      return `window.open('${inner}/popup'); window.open('/bounce/popup', '_blank');`;
    case 'websocket':
      return `try { const w = new WebSocket('${ws}/live'); w.onerror = () => {}; } catch (e) {}`;
    case 'location-302':
      return `setTimeout(() => { location.href = '/bounce/elsewhere'; }, 50);`;
    case 'location-https':
      return `setTimeout(() => { location.href = '${inner.replace(/^http:/, 'https:')}/secure'; }, 50);`;
  }
}

/**
 * A JS-rendered page (its content exists only once its script ran) that then tries `variant` into `inner`
 * (an origin such as `http://127.0.0.9:1234` the crawler must never reach).
 */
export function hostileBackgroundPage(variant: BackgroundVariant, inner: string): string {
  return `<!doctype html><html><head><title>Quarterly report</title></head><body><div id="root"></div>
<script>
  const root = document.getElementById('root');
  root.innerHTML = '<article><h1>Quarterly report</h1><p>${HOSTILE_RENDERED_TEXT}</p>' + '<p>More paragraphs of real content follow here.</p>'.repeat(8) + '</article>';
  document.body.dataset.variant = '${variant}';
  ${attempt(variant, inner)}
</script></body></html>`;
}

/** Routes of the allowed host: `/hostile/<variant>` pages and the `/bounce/*` 302s into `inner`. */
export function hostileRoutes(inner: string): Routes {
  const routes: Routes = { '/bounce/*': (req, res) => void res.writeHead(302, { location: `${inner}${(req.url ?? '/').replace(/^\/bounce/, '')}` }).end() };
  for (const v of BACKGROUND_VARIANTS) routes[`/hostile/${v}`] = { body: hostileBackgroundPage(v, inner) };
  routes['/main-302'] = redirect(`${inner}/main`);
  return routes;
}

/**
 * A server standing for the internal network, on a loopback address of its own (`127.0.0.9` by default) that the
 * crawler is not allowed to reach. It counts TCP connections, not only requests, so a WebSocket handshake or a
 * request cut short still counts.
 */
export interface PrivateTarget {
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  connections: number;
  readonly requests: string[];
  reset(): void;
  close(): Promise<void>;
}

export async function startPrivateTarget(host = '127.0.0.9'): Promise<PrivateTarget> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html', 'content-disposition': req.url?.includes('file') ? 'attachment; filename=x.bin' : 'inline' });
    res.end('<h1>internal secret</h1>');
  });
  server.on('upgrade', (req, socket) => {
    requests.push(`upgrade ${req.url}`);
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  const target: PrivateTarget = {
    origin: `http://${host}:${port}`,
    host,
    port,
    connections: 0,
    requests,
    reset() {
      target.connections = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  server.on('connection', () => target.connections++);
  return target;
}
