import { createHash, randomBytes } from 'node:crypto';

/**
 * A proof-of-work gate in the shape of Fastly's Client Challenge (written for this simulator from public scrapers'
 * notes on it): every visitor without its cookie gets a near-blank page with status 200, titled "Client Challenge", that
 * loads its script from the edge's own `/_fs-ch-<id>/` path and calls `init(...)` with the work: two characters to find
 * whose SHA-256 over `base` + them is `hash`. The script posts the answer back, the post-back endpoint checks it and sets
 * the cookie, and the script reloads. A client that does not run the script never gets past it. The cookie's name is
 * ours.
 */

/** The edge's path prefix for the challenge's assets and endpoints. */
export const FASTLY_PREFIX = '/_fs-ch-S1mWe8Fa5t1yGate';
/** Where the challenge script is served. */
export const FASTLY_SCRIPT_PATH = `${FASTLY_PREFIX}/script.js`;
/** The endpoint the script posts its answer to. */
export const FASTLY_POST_BACK_PATH = `${FASTLY_PREFIX}/fst-post-back`;
/** Name of the cookie the post-back endpoint sets. */
export const FASTLY_COOKIE = 'sim_fs_clearance';

/** The characters an answer is made of (two of them). */
const ANSWER_CHARSET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export interface FastlyChallenge {
  /** Opaque token the answer is posted with; it names the challenge. */
  token: string;
  base: string;
  /** SHA-256 (hex) of `base` + the answer. */
  hash: string;
}

/** A fresh challenge. */
export function newFastlyChallenge(): FastlyChallenge {
  const answer = Array.from(randomBytes(2), (b) => ANSWER_CHARSET[b % ANSWER_CHARSET.length]).join('');
  const base = randomBytes(6).toString('base64url');
  return { token: randomBytes(12).toString('hex'), base, hash: createHash('sha256').update(`${base}${answer}`).digest('hex') };
}

/** Whether `answer` solves `c`. */
export function checkFastlyAnswer(c: FastlyChallenge, answer: string): boolean {
  return createHash('sha256').update(`${c.base}${answer}`).digest('hex') === c.hash;
}

/** The challenge page, served with status 200. */
export function fastlyPage(c: FastlyChallenge, path: string): string {
  const work = JSON.stringify([{ ty: 'pow', data: { base: c.base, hash: c.hash, expires: new Date(Date.now() + 300_000).toISOString() } }]);
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="UTF-8"><meta name="viewport" content="width=device-width, initial-scale=1.0"><title>Client Challenge</title>
<style>#loading-error{font-size:16px;margin:10px;display:none}</style></head>
<body>
<noscript><div><span>JavaScript is disabled in your browser.</span><p>Please enable JavaScript to proceed.</p></div></noscript>
<div id="loading-error" role="alert" aria-live="polite">A required part of this site couldn’t load. This may be due to a browser extension, network issues, or browser settings.</div>
<script>
function loadScript(src) {
  return new Promise(function (resolve, reject) {
    var s = document.createElement('script');
    s.onload = resolve;
    s.onerror = reject;
    s.src = src;
    document.head.appendChild(s);
  });
}
loadScript('${FASTLY_SCRIPT_PATH}?reload=true')
  .then(function () { init(${work}, ${JSON.stringify(c.token)}, ${JSON.stringify(path)}, true); })
  .catch(function () { document.getElementById('loading-error').style.display = 'block'; });
</script>
</body>
</html>`;
}

/**
 * The challenge script: `init` waits `delayMs` (the time a real solve takes), finds the answer with WebCrypto, posts
 * it back and, when the edge accepted it, reloads the page.
 */
export function fastlyScript(delayMs: number): string {
  return `window.init = function (challenges, token, path, reload) {
  var chars = ${JSON.stringify(ANSWER_CHARSET)};
  var enc = new TextEncoder();
  var hex = function (buf) { return Array.from(new Uint8Array(buf), function (b) { return b.toString(16).padStart(2, '0'); }).join(''); };
  setTimeout(async function () {
    var answers = [];
    for (var c of challenges) {
      var d = c.data;
      search: for (var i = 0; i < chars.length; i++) {
        for (var j = 0; j < chars.length; j++) {
          var answer = chars[i] + chars[j];
          if (hex(await crypto.subtle.digest('SHA-256', enc.encode(d.base + answer))) === d.hash) {
            answers.push({ ty: c.ty, base: d.base, answer: answer, expires: d.expires });
            break search;
          }
        }
      }
    }
    var r = await fetch('${FASTLY_POST_BACK_PATH}', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: token, data: answers }) });
    if (r.ok && reload) location.reload();
  }, ${Math.max(0, Math.floor(delayMs))});
};
`;
}
