// Synthetic web for the soak run: ~30 loopback hosts of every kind the crawler meets, running until killed.
// Writes the sites as JSON to argv[2] (default bench/soak/out/sites.json).
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { startSimWeb } from '@crawler/sim-web';
import {
  startTestServer, startRevisitSite, startChangingSite, staticArticle, slowBody, slowHeaders, endlessBody, gzipBomb,
  resetMidBody, connectionReset, status, redirectLoop, robotsTxt,
} from '@crawler/testkit';

const out = process.argv[2] ?? 'bench/soak/out/sites.json';
const first = process.env.SOAK_FIRST_HOST ?? '127.0.50.2';
const kinds = [
  ...Array(10).fill({ kind: 'static' }),
  ...Array(5).fill({ kind: 'spa' }),
  ...Array(2).fill({ kind: 'interstitial', challengeDelayMs: 300 }),
  ...Array(2).fill({ kind: 'botwall', challengeDelayMs: 300 }),
  ...Array(3).fill({ kind: 'ratelimit', rateLimit: { maxRequests: 5, windowMs: 20_000 } }),
  { kind: 'files' },
  { kind: 'botwall', wallFamily: 'anubis', name: 'wall-anubis' },
  { kind: 'botwall', wallFamily: 'wordfence', name: 'wall-wordfence' },
];
const web = await startSimWeb({ sites: kinds, firstHost: first });
const sites = web.sites.map((s) => ({ name: s.name, kind: s.kind, origin: s.origin, pagePrefix: s.kind === 'files' ? '/files/doc-' : '/page/', pageSuffix: s.kind === 'files' ? '.pdf' : '' }));

// Hostile host: huge, slow, broken pages.
const big = 'x'.repeat(3 * 1024 * 1024);
const hostile = await startTestServer({
  '/robots.txt': robotsTxt(),
  '/huge': endlessBody(),
  '/big': { status: 200, headers: { 'content-type': 'text/html' }, body: `<!doctype html><html><body><p>${big}</p></body></html>` },
  '/bomb': gzipBomb(20 * 1024 * 1024),
  '/slow-body': slowBody({ chunks: 40, intervalMs: 1000 }),
  '/slow-headers': slowHeaders(45_000),
  '/reset': resetMidBody(2048),
  '/conn-reset': connectionReset(),
  '/500': status(500),
  '/404': status(404),
  ...redirectLoop('/loop-a', '/loop-b'),
  '/ok': { status: 200, headers: { 'content-type': 'text/html' }, body: staticArticle() },
}, { host: '127.0.51.2' });
sites.push({ name: 'hostile', kind: 'hostile', origin: hostile.url('/').replace(/\/$/, ''), paths: ['/huge', '/big', '/bomb', '/slow-body', '/slow-headers', '/reset', '/conn-reset', '/500', '/404', '/loop-a', '/ok'] });

// Pages that change between visits.
const rev1 = await startRevisitSite({ host: '127.0.51.3', staticPages: ['s1', 's2', 's3'], alwaysChanging: ['c1', 'c2', 'c3'] });
sites.push({ name: 'revisit', kind: 'revisit', origin: rev1.origin, pages: rev1.pages() });
const changing = await startChangingSite({ '/etag-1': 'etag', '/etag-2': 'etag', '/lm-1': 'last-modified', '/none-1': 'none' }, { host: '127.0.51.4' });
sites.push({ name: 'changing', kind: 'changing', origin: changing.url('/').replace(/\/$/, ''), pages: ['/etag-1', '/etag-2', '/lm-1', '/none-1'].map((p) => changing.url(p)) });
let tick = 0;
setInterval(() => { tick++; changing.change(['/etag-1', '/lm-1', '/none-1'][tick % 3]); rev1.change(`s${(tick % 3) + 1}`); }, 90_000).unref();

mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(sites, null, 1));
console.log(`sim-web: ${sites.length} hosts → ${out}`);
const stop = async () => { await Promise.allSettled([web.close(), hostile.close(), rev1.close(), changing.close()]); process.exit(0); };
process.on('SIGTERM', stop); process.on('SIGINT', stop);
setInterval(() => {
  const t = web.stats().totals;
  console.log(JSON.stringify({ at: new Date().toISOString(), pageRequests: t.pageRequests, served: t.served, blocked: t.blocked }));
}, 60_000);
