// Synthetic web for the fairness audit: one big site on 127.0.0.10 and SMALL small sites on 127.0.0.11…, each its own
// loopback host. BIG_MODE: ok | slow (2–5 s per response) | 429 (after BIG_OK pages, answers 429 Retry-After 5).
import { startTestServer, staticArticle } from '@crawler/testkit';
const small = Number(process.env.SMALL ?? 49);
const mode = process.env.BIG_MODE ?? 'ok';
const okPages = Number(process.env.BIG_OK ?? 20);
let served = 0;
const page = (title) => (req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title }));
const big = await startTestServer({
  '/p/*': (req, res) => {
    if (mode === 'slow') { setTimeout(() => page('big')(req, res), 2000 + Math.floor(Math.random() * 3000)); return; }
    if (mode === '429' && served >= okPages) { res.writeHead(429, { 'content-type': 'text/html', 'retry-after': '5' }).end('<html><body><h1>Too Many Requests</h1></body></html>'); return; }
    served += 1; page('big')(req, res);
  },
}, { host: '127.0.0.10' });
const smalls = [];
for (let i = 0; i < small; i++) smalls.push(await startTestServer({ '/p/*': page('small') }, { host: `127.0.0.${11 + i}` }));
process.stdout.write(JSON.stringify({ big: big.origin, small: smalls.map((s) => s.origin) }) + '\n');
process.on('SIGTERM', async () => { await big.close(); for (const s of smalls) await s.close(); process.exit(0); });
