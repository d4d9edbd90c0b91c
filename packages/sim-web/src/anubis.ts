import { createHash, randomBytes } from 'node:crypto';

/**
 * A proof-of-work gate in the shape of Anubis (written for this simulator from its public description): every visitor
 * without its cookie gets a challenge page with status 200, a long "why am I seeing this" explanation and the
 * challenge as JSON in the head; a module script finds a nonce whose SHA-256 over challenge + nonce starts with
 * `difficulty` hex zeroes and navigates to the pass endpoint, which checks the work, sets the cookie and redirects
 * back. A client that does not run the script never gets past it, and a forged answer is refused.
 */

/** Name of the cookie the pass endpoint sets. */
export const ANUBIS_COOKIE = 'techaro.lol-anubis-auth';
/** Where the challenge script is served. */
export const ANUBIS_SCRIPT_PATH = '/.within.website/x/cmd/anubis/static/js/main.mjs';
/** The endpoint the script sends its answer to. */
export const ANUBIS_PASS_PATH = '/.within.website/x/cmd/anubis/api/pass-challenge';

export interface AnubisChallenge {
  id: string;
  /** Hex string the work is done over. */
  challenge: string;
  /** Leading hex zeroes the hash needs. */
  difficulty: number;
}

/** A fresh challenge. */
export function newAnubisChallenge(difficulty: number): AnubisChallenge {
  return { id: randomBytes(8).toString('hex'), challenge: randomBytes(16).toString('hex'), difficulty };
}

/** Whether `nonce` solves `c` and `response` is its hash. */
export function checkAnubisWork(c: AnubisChallenge, nonce: string, response: string): boolean {
  const hash = createHash('sha256').update(`${c.challenge}${nonce}`).digest('hex');
  return hash === response && hash.startsWith('0'.repeat(c.difficulty));
}

const EXPLANATION = [
  'The people who run this site put a proof-of-work gate in front of it because automated scrapers were requesting pages faster than the server could answer, which took the site down for its ordinary readers more than once.',
  'The gate is a trade-off. Your browser is asked to find a number whose SHA-256 hash, together with a challenge string, starts with a few zeroes. One visitor hardly notices the extra work, while a scraper that fetches millions of pages pays for it on every one of them.',
  'It is a stopgap until headless browsers can be told apart by how they behave, so that people using an ordinary browser are not asked to compute anything at all.',
  'Privacy extensions that turn off web workers or WebCrypto keep the check from finishing; allow them on this domain if the page does not move on.',
];

/** The challenge page, served with status 200 as Anubis does by default. */
export function anubisPage(c: AnubisChallenge): string {
  const data = JSON.stringify({ rules: { algorithm: 'fast', difficulty: c.difficulty, report_as: c.difficulty }, challenge: c.challenge, id: c.id });
  return `<!DOCTYPE html>
<html lang="en"><head><title>Making sure you&#39;re not a bot!</title>
<meta name="viewport" content="width=device-width, initial-scale=1.0"><meta name="robots" content="noindex,nofollow">
<script id="anubis_version" type="application/json">"sim-1.0"</script>
<script id="anubis_challenge" type="application/json">${data}</script>
<script id="anubis_base_prefix" type="application/json">""</script>
</head><body id="top"><main>
<h1 id="title">Making sure you&#39;re not a bot!</h1>
<p id="status">Loading...</p>
<script async type="module" src="${ANUBIS_SCRIPT_PATH}"></script>
<details><summary>Why am I seeing this?</summary>${EXPLANATION.map((p) => `<p>${p}</p>`).join('')}<p>This website is running Anubis version <code>sim-1.0</code>.</p></details>
<noscript><p>You need JavaScript to get past this check.</p></noscript>
<footer><p>Protected by Anubis (simulated).</p></footer>
</main></body></html>`;
}

/** The page the pass endpoint answers a wrong answer with (Anubis's "Oh noes!"). */
export function anubisRejectPage(): string {
  return '<!DOCTYPE html><html lang="en"><head><title>Oh noes!</title><script id="anubis_version" type="application/json">"sim-1.0"</script></head><body><h1>Oh noes!</h1><p>Invalid response.</p><p><a href="/">Go home</a></p></body></html>';
}

/**
 * The challenge script: waits `delayMs` (the time a real solve takes), does the work with WebCrypto, then goes to the
 * pass endpoint with the page's own path as the place to come back to.
 */
export function anubisScript(delayMs: number): string {
  return `const c = JSON.parse(document.getElementById('anubis_challenge').textContent);
const status = document.getElementById('status');
status.textContent = 'Calculating...';
const enc = new TextEncoder();
const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
const zeroes = '0'.repeat(c.rules.difficulty);
setTimeout(async () => {
  for (let nonce = 0; ; nonce++) {
    const hash = hex(await crypto.subtle.digest('SHA-256', enc.encode(c.challenge + nonce)));
    if (hash.startsWith(zeroes)) {
      status.textContent = 'Success!';
      const q = new URLSearchParams({ id: c.id, response: hash, nonce: String(nonce), redir: location.pathname + location.search });
      location.replace('${ANUBIS_PASS_PATH}?' + q.toString());
      return;
    }
  }
}, ${Math.max(0, Math.floor(delayMs))});
`;
}
