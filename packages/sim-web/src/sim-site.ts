import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '@crawler/core';
import { challengePage, jsRenderedPage, pdfBytes, startTestServer, staticArticle, type TestCa, type TestServer } from '@crawler/testkit';
import { ANUBIS_COOKIE, ANUBIS_PASS_PATH, ANUBIS_SCRIPT_PATH, anubisPage, anubisRejectPage, anubisScript, checkAnubisWork, newAnubisChallenge, type AnubisChallenge } from './anubis.js';
import { blockPage, cloudflareInteractivePage, radwareBlockPage, wordfenceBlockPage } from './block-page.js';
import { FASTLY_COOKIE, FASTLY_POST_BACK_PATH, FASTLY_SCRIPT_PATH, checkFastlyAnswer, fastlyPage, fastlyScript, newFastlyChallenge, type FastlyChallenge } from './fastly.js';
import { checkThenDenyInPlacePage, managedThenCaptchaPage } from './in-place.js';
import { F5_TSPD_COOKIE, F5_TSPD_SCRIPT_PATH, SOLVED_PATH, clearanceOf, f5TspdPage, f5TspdScript, interstitialPage, newClearanceToken } from './interstitial.js';
import { fileAnswer } from './files.js';
import { trapAnswer } from './traps.js';
import { RateLimiter, classifyClient, kindAt, type ClientClass, type KindChange, type RateLimit, type SiteKind } from './site-kinds.js';

/** One site of the simulated web. */
export interface SiteSpec {
  kind: SiteKind;
  /** Changes of kind, in order; later ones win when several hold. @defaultValue [] */
  changes?: KindChange[];
  /** Limit of a `ratelimit` site (any other site may have one too). */
  rateLimit?: RateLimit;
  /** Label used in reports. @defaultValue `${kind}-${index}` */
  name?: string;
  /** How long a wall's interstitial script waits before it sets the clearance cookie and reloads. @defaultValue 1000 */
  challengeDelayMs?: number;
  /** A wall's interstitial is of a family no detector knows (see InterstitialOptions.unknownFamily). @defaultValue false */
  unknownWallFamily?: boolean;
  /** The `Domain` a `checking` interstitial's clearance cookie is set for (see InterstitialOptions.cookieDomain). @defaultValue none: host-only */
  clearanceCookieDomain?: string;
  /**
   * The family of a wall's interstitial: `checking`, the cookie-and-reload "Just a moment…" page (503, or 403 for a
   * botwall); `anubis`, a proof-of-work page served with 200 whose script solves SHA-256 work and passes through a
   * redirecting endpoint that sets the cookie (see anubis.ts); like the real one it lets any browser that runs its
   * script through (a botwall's refusal of `navigator.webdriver` is the `checking` page's); `blocked`, a firewall's hard
   * refusal (Cloudflare's "Sorry, you have been blocked", 403) that nothing gets past; `check_then_block`, the
   * `checking` page whose check ends on that refusal, as a JS challenge does when the firewall rule behind it blocks the
   * client it has just checked (Cloudflare's 1020 after "Just a moment…"): its cookie and reload earn the block page,
   * never the content; `fastly`, a proof-of-work page served with 200 in the shape of Fastly's Client Challenge, whose
   * script solves the work, posts it back for the cookie and reloads (see fastly.ts; any browser that runs it gets
   * through); `wordfence`, Wordfence's firewall 403 (a refusal); `cloudflare_interactive`, Cloudflare's interactive
   * challenge (403 with `cf-mitigated: challenge`), a checkbox only a person ticks; `f5_tspd`, F5 Bot Defense's stub
   * (200, nothing but the /TSPD/?type=12 sensor, whose script sets a cookie and reloads); `radware`, Radware AppWall's
   * block page (403 with `X-SL-CompState`, a refusal); `managed_then_captcha`, Cloudflare's managed challenge (403 with
   * `cf-mitigated: challenge`) whose script swaps its spinner for the Turnstile checkbox in place after
   * `challengeDelayMs` (no navigation: a captcha from then on); `check_then_deny_in_place`, Akamai's interstitial (200)
   * whose script writes the edge's "Access Denied" over the document after `challengeDelayMs` (no navigation: a
   * refusal from then on). See in-place.ts; `second_request`, a site whose bot score rises as it watches a session:
   * a visitor's first page is served, with a session cookie (`sim_session`), and every later request of that session
   * without clearance gets the `checking` interstitial; a request without the session cookie is a new visitor, served
   * again. @defaultValue 'checking'
   */
  wallFamily?: 'checking' | 'anubis' | 'blocked' | 'check_then_block' | 'fastly' | 'wordfence' | 'cloudflare_interactive' | 'f5_tspd' | 'radware' | 'managed_then_captcha' | 'check_then_deny_in_place' | 'second_request';
  /** Leading hex zeroes an `anubis` wall asks for. @defaultValue 2 */
  anubisDifficulty?: number;
  /**
   * Client address ranges the site refuses, as real sites refuse datacenter ranges: a page request from an address
   * starting with one of these (`127.0.0.`, `127.0.2.`) gets a 403 challenge it cannot pass, whatever the client.
   * @defaultValue [] (every address is served)
   */
  blockedAddresses?: string[];
  /** The site's robots.txt. @defaultValue 'User-agent: *\nDisallow:\n' (everything allowed) */
  robotsTxt?: string;
  /**
   * robots.txt stands behind the site's wall like its pages (a wall in front of the whole host, as a CDN's bot rule
   * usually is): a client without clearance gets the wall's answer for it too, and a cleared one the file.
   * @defaultValue false (robots.txt is served to anyone, whatever the wall)
   */
  wallCoversRobots?: boolean;
  /**
   * The certificate an HTTPS site presents (SimWebSpec.https): `valid`, issued by the web's CA for the site's address;
   * `expired`, the same but ended a day ago; `wrong_host`, valid but for another host. @defaultValue 'valid'
   */
  certificate?: 'valid' | 'expired' | 'wrong_host';
  /** An HTTPS site sends `Strict-Transport-Security: max-age=31536000` with every HTTPS answer. @defaultValue false */
  hsts?: boolean;
  /**
   * What an HTTPS site's plain-HTTP listener (SimSite.plainOrigin) does: `upgrade`, a 301 to the same path over HTTPS
   * for every request (robots.txt included), as most sites answer on port 80; `downgrade`, it serves the site, and the
   * HTTPS listener answers every request with a 301 to the same path over plain HTTP (a site whose HTTPS is only a
   * front door). @defaultValue 'upgrade'
   */
  plainHttp?: 'upgrade' | 'downgrade';
  /** Bytes of the site's `/files/huge-N.bin` attachment (see files.ts). @defaultValue 1048576 */
  hugeFileBytes?: number;
}

/** Name of the session cookie a `second_request` wall gives a visitor with its first page. */
export const SESSION_COOKIE = 'sim_session';

/** What the site did with one request. */
export type RequestOutcome = 'served' | 'shell' | 'challenge' | 'rate_limited' | 'not_found' | 'address_blocked';

/** One page request, as the site saw it. */
export interface SiteRequest {
  /** Sequence number within the site, from 1. */
  seq: number;
  /** The request's path; a `traps` site's log has the query too (`/cal?month=3`). */
  path: string;
  client: ClientClass;
  /** Simulated epoch ms at arrival. */
  atMs: number;
  /** The site's kind when it answered. */
  kind: SiteKind;
  /** The client's address as the site's socket saw it (IPv4-mapped prefixes removed). */
  address: string;
  /**
   * `served`: the client got the page (for JS-rendered pages: the page's script reported that it ran; behind a wall:
   * the request carried a clearance cookie the site issued); `shell`: an SPA shell nobody rendered; `challenge`: the
   * wall's interstitial (every request without clearance gets one); `rate_limited`: a 429 while the site was pausing us.
   */
  outcome: RequestOutcome;
}

/** A site's counters. */
export interface SiteStats {
  name: string;
  domain: string;
  kind: SiteKind;
  initialKind: SiteKind;
  /** Page requests by client class (beacons, favicons and robots.txt are not pages). */
  requests: Record<ClientClass, number>;
  /** Page requests in total. */
  pageRequests: number;
  /** Requests the site refused: received while it was pausing us (429) or stopped by its wall. */
  blocked: number;
  /** Requests that got the page. */
  served: number;
  /** When each change of kind was first seen to hold: simulated ms and the number of the first request under it. */
  changes: Array<{ kind: SiteKind; atMs: number; fromSeq: number }>;
  /**
   * Challenges solved: a `checking` interstitial's script that ran to its cookie (it reports so before it reloads), an
   * `anubis` or `fastly` wall's work accepted. A page that reuses another's clearance solves nothing; eight pages that
   * each wait out the check are eight solves, whichever cookie their reloads carry.
   */
  solves: number;
  /** The host each solve was made on (its request's Host, without the port), in order: which sibling host solved. */
  solvedOn: string[];
}

/** A running simulated site. */
export interface SimSite {
  readonly name: string;
  /** The site's domain as the crawler sees it (its loopback address). */
  readonly domain: string;
  /** `http://127.0.0.x:port`, `https://…` for a site of an HTTPS web. */
  readonly origin: string;
  /** An HTTPS site's plain-HTTP listener, `http://127.0.0.x:port` (the same address, another port; see SiteSpec.plainHttp); undefined without HTTPS. */
  readonly plainOrigin: string | undefined;
  /** TCP connections the site accepted (on its HTTPS listener: handshakes begun, those the client refused included). */
  connections(): number;
  /** The kind the site has now. */
  readonly kind: SiteKind;
  readonly initialKind: SiteKind;
  /** `count` page URLs starting at page number `from`; a files site serves PDFs, every other kind HTML pages. */
  urls(count: number, from?: number): string[];
  stats(): SiteStats;
  /** Every page request so far, in arrival order. */
  requestLog(): readonly SiteRequest[];
  /** Requests for a walled robots.txt (SiteSpec.wallCoversRobots), in arrival order: by whom, and whether they passed the wall. */
  robotsLog(): ReadonlyArray<{ client: ClientClass; cleared: boolean }>;
  close(): Promise<void>;
}

const BEACON = '/__sim/beacon';
/** Every site's open redirector: `/__sim/redirect?to=URL` answers 302 to URL. */
export const REDIRECT_PATH = '/__sim/redirect';

function pagePath(kind: SiteKind, n: number): string {
  if (kind === 'traps') return n <= 1 ? '/' : `/article/${n}`;
  return kind === 'files' ? `/files/doc-${n}.pdf` : `/page/${n}`;
}

/** A script that tells the site the page's own script ran to the end (a render, or a gate passed). */
function beaconScript(seq: number): string {
  return `<script>try{fetch('${BEACON}?seq=${seq}',{keepalive:true})}catch(e){}</script>`;
}

function relatedLinks(kind: SiteKind, n: number): string[] {
  return [1, 2, 3].map((d) => pagePath(kind, n + d));
}

/** Start one site on `host` (a loopback address of its own), its clock giving the simulated time. */
export async function startSimSite(spec: SiteSpec, opts: { host: string; index: number; clock?: Clock; port?: number; tls?: { ca: TestCa }; peers?: () => readonly SimSite[] }): Promise<SimSite> {
  const clock = opts.clock ?? systemClock;
  const name = spec.name ?? `${spec.kind}-${opts.index}`;
  const changes = spec.changes ?? [];
  const limiter = spec.kind === 'ratelimit' || spec.rateLimit ? new RateLimiter(spec.rateLimit) : null;
  const log: SiteRequest[] = [];
  const seen: SiteStats['changes'] = [];
  // Clearance tokens the walls' interstitials handed out: a request carrying one has passed.
  const issued = new Set<string>();
  let solves = 0;
  const solvedOn: string[] = [];
  const solved = (req: IncomingMessage): void => {
    solves += 1;
    solvedOn.push((req.headers.host ?? '').replace(/:\d+$/, ''));
  };
  // Proof-of-work challenges an anubis wall handed out and not yet answered, by id.
  const challenges = new Map<string, AnubisChallenge>();
  const anubis = spec.wallFamily === 'anubis';
  // Proof-of-work challenges a fastly wall handed out and not yet answered, by token.
  const fastlyChallenges = new Map<string, FastlyChallenge>();
  const fastly = spec.wallFamily === 'fastly';
  // Sessions a `second_request` wall opened with a visitor's first page.
  const sessions = new Set<string>();
  let current: SiteKind = spec.kind;
  // Requests for a walled robots.txt (SiteSpec.wallCoversRobots): by whom, and whether they passed the wall.
  const robotsRequests: Array<{ client: ClientClass; cleared: boolean }> = [];

  const kindNow = (nowMs: number): SiteKind => {
    const k = kindAt(spec.kind, changes, nowMs, log.length);
    if (k !== current) {
      current = k;
      seen.push({ kind: k, atMs: nowMs, fromSeq: log.length + 1 });
    }
    return k;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    // Over HTTPS the walls' cookies are `Secure`, as real clearance cookies are (cf_clearance, Anubis's, Fastly's).
    const secure = (req.socket as TLSSocket).encrypted === true ? '; Secure' : '';
    if (url.pathname === BEACON) {
      const entry = log[Number(url.searchParams.get('seq')) - 1];
      if (entry && (entry.outcome === 'shell' || entry.outcome === 'challenge')) entry.outcome = 'served';
      res.writeHead(204).end();
      return;
    }
    // An open redirector, as many sites have (`/out?url=`): where a redirect chain leaves a site and comes back.
    if (url.pathname === REDIRECT_PATH) {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      return;
    }
    if (spec.kind === 'traps' && url.pathname !== '/robots.txt') {
      serveTrap(req, res);
      return;
    }
    if (url.pathname === SOLVED_PATH) {
      solved(req);
      res.writeHead(204, { 'cache-control': 'no-store' }).end();
      return;
    }
    if (anubis && url.pathname === ANUBIS_SCRIPT_PATH) {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' }).end(anubisScript(spec.challengeDelayMs ?? 1000));
      return;
    }
    if (anubis && url.pathname === ANUBIS_PASS_PATH) {
      const q = url.searchParams;
      const c = challenges.get(q.get('id') ?? '');
      const redir = q.get('redir') ?? '/';
      if (!c || !checkAnubisWork(c, q.get('nonce') ?? '', q.get('response') ?? '') || !redir.startsWith('/') || redir.startsWith('//')) {
        res.writeHead(403, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(anubisRejectPage());
        return;
      }
      challenges.delete(c.id);
      solved(req);
      const token = newClearanceToken();
      issued.add(token);
      res.writeHead(302, { location: redir, 'set-cookie': `${ANUBIS_COOKIE}=${token}; Path=/; Max-Age=604800; HttpOnly; SameSite=Lax${secure}`, 'cache-control': 'no-store' }).end();
      return;
    }
    if (fastly && url.pathname === FASTLY_SCRIPT_PATH) {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' }).end(fastlyScript(spec.challengeDelayMs ?? 1000));
      return;
    }
    if (fastly && url.pathname === FASTLY_POST_BACK_PATH && req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let answer: { token?: unknown; data?: Array<{ answer?: unknown }> } = {};
        try {
          answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof answer;
        } catch {
          // A body that is not JSON answers nothing.
        }
        const c = fastlyChallenges.get(typeof answer.token === 'string' ? answer.token : '');
        const given = answer.data?.[0]?.answer;
        if (!c || typeof given !== 'string' || !checkFastlyAnswer(c, given)) {
          res.writeHead(403, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end('{"ok":false}');
          return;
        }
        fastlyChallenges.delete(c.token);
        solved(req);
        const token = newClearanceToken();
        issued.add(token);
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': `${FASTLY_COOKIE}=${token}; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax${secure}`, 'cache-control': 'no-store' }).end('{"ok":true}');
      });
      return;
    }
    if (spec.wallFamily === 'f5_tspd' && url.pathname === F5_TSPD_SCRIPT_PATH) {
      // The sensor hands out the clearance it will store.
      const token = newClearanceToken();
      issued.add(token);
      res.writeHead(200, { 'content-type': 'application/javascript', 'cache-control': 'no-store' }).end(f5TspdScript(token, spec.challengeDelayMs ?? 1000));
      return;
    }
    const robotsBody = spec.robotsTxt ?? 'User-agent: *\nDisallow:\n';
    const walledRobots = url.pathname === '/robots.txt' && spec.wallCoversRobots === true && (spec.kind === 'botwall' || spec.kind === 'interstitial');
    if (url.pathname === '/robots.txt' && !walledRobots) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(robotsBody);
      return;
    }
    const isPage = url.pathname.startsWith('/page/') || url.pathname.startsWith('/files/');
    if (!isPage && !walledRobots) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const nowMs = clock.now().getTime();
    const kind = kindNow(nowMs);
    const client = classifyClient(req.rawHeaders);
    const address = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const entry: SiteRequest = { seq: log.length + 1, path: url.pathname, client, atMs: nowMs, kind, address, outcome: 'served' };
    // robots.txt is no page: it is answered by the wall but not logged or counted (robotsRequests counts it).
    if (walledRobots) robotsRequests.push({ client, cleared: false });
    else log.push(entry);
    const n = Number(/(\d+)(?:\.[a-z]+)?$/.exec(url.pathname)?.[1] ?? 0);
    // A file under /files/ (files.ts), served where the site serves its content: by a static or files site, and by a
    // walled one to a visitor with clearance.
    const file = url.pathname.startsWith('/files/') ? fileAnswer(url.pathname, n, { hugeBytes: spec.hugeFileBytes ?? 1024 * 1024 }) : null;
    const serveContent = (fallback: () => void): void => {
      if (file) res.writeHead(file.status, file.headers).end(file.body);
      else fallback();
    };
    const title = `${name} page ${n}`;
    if ((spec.blockedAddresses ?? []).some((prefix) => address.startsWith(prefix))) {
      entry.outcome = 'address_blocked';
      res.writeHead(403, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(challengePage('cloudflare'));
      return;
    }

    if (limiter) {
      const verdict = limiter.take(nowMs);
      if (!verdict.allowed) {
        entry.outcome = 'rate_limited';
        const retryAfterS = Math.max(1, Math.ceil((verdict.pausedUntilMs! - nowMs) / 1000));
        res.writeHead(429, { 'content-type': 'text/html', 'retry-after': String(retryAfterS) }).end('<html><head><title>429 Too Many Requests</title></head><body><h1>Too Many Requests</h1></body></html>');
        return;
      }
    }
    switch (kind) {
      case 'static':
      case 'ratelimit':
        serveContent(() => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title, links: relatedLinks(kind, n) })));
        return;
      case 'files':
        serveContent(() => res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdfBytes()));
        return;
      case 'spa':
        // Only a client that runs the page's script renders it; the beacon marks the request served when it does.
        entry.outcome = 'shell';
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(jsRenderedPage({ title, links: relatedLinks(kind, n) }).replace('</body>', `${beaconScript(entry.seq)}</body>`));
        return;
      case 'botwall':
      case 'interstitial': {
        const token = clearanceOf(req.headers.cookie, anubis ? ANUBIS_COOKIE : fastly ? FASTLY_COOKIE : spec.wallFamily === 'f5_tspd' ? F5_TSPD_COOKIE : undefined);
        const checkedThenBlocked = spec.wallFamily === 'check_then_block' && token !== null && issued.has(token);
        if (token !== null && issued.has(token) && !checkedThenBlocked) {
          if (walledRobots) {
            robotsRequests.at(-1)!.cleared = true;
            res.writeHead(200, { 'content-type': 'text/plain' }).end(robotsBody);
            return;
          }
          serveContent(() => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title, links: relatedLinks(kind, n) })));
          return;
        }
        const session = clearanceOf(req.headers.cookie, SESSION_COOKIE);
        if (spec.wallFamily === 'second_request' && (session === null || !sessions.has(session))) {
          const id = newClearanceToken();
          sessions.add(id);
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'set-cookie': `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax${secure}` }).end(staticArticle({ title, links: relatedLinks(kind, n) }));
          return;
        }
        // Every visitor without clearance gets the interstitial, browsers included: 403 like a managed challenge
        // for the wall that refuses automation, 503 like the classic "checking your browser" page for the other.
        entry.outcome = 'challenge';
        if (spec.wallFamily === 'blocked' || checkedThenBlocked) {
          const rayId = newClearanceToken().slice(0, 16);
          res.writeHead(403, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', server: 'cloudflare' }).end(blockPage({ host: opts.host, rayId }));
          return;
        }
        if (spec.wallFamily === 'wordfence') {
          res.writeHead(403, { 'content-type': 'text/html; charset=UTF-8', 'cache-control': 'no-cache, must-revalidate, max-age=0' }).end(wordfenceBlockPage({ at: new Date(nowMs) }));
          return;
        }
        if (spec.wallFamily === 'radware') {
          res.writeHead(403, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'x-sl-compstate': '1' }).end(radwareBlockPage({ caseNumber: String(Date.now()) + String(entry.seq).padStart(6, '0') }));
          return;
        }
        if (spec.wallFamily === 'f5_tspd') {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', pragma: 'no-cache' }).end(f5TspdPage({ supportId: `1484170285630${String(entry.seq).padStart(7, '0')}` }));
          return;
        }
        if (spec.wallFamily === 'cloudflare_interactive') {
          const rayId = newClearanceToken().slice(0, 16);
          res
            .writeHead(403, { 'content-type': 'text/html; charset=UTF-8', 'cache-control': 'private, max-age=0, no-store, no-cache, must-revalidate', 'cf-mitigated': 'challenge', server: 'cloudflare', 'cf-ray': `${rayId}-SIM` })
            .end(cloudflareInteractivePage({ host: opts.host, rayId }));
          return;
        }
        if (spec.wallFamily === 'managed_then_captcha') {
          const rayId = newClearanceToken().slice(0, 16);
          res
            .writeHead(403, { 'content-type': 'text/html; charset=UTF-8', 'cache-control': 'private, max-age=0, no-store, no-cache, must-revalidate', 'cf-mitigated': 'challenge', server: 'cloudflare', 'cf-ray': `${rayId}-SIM` })
            .end(managedThenCaptchaPage({ host: opts.host, rayId, delayMs: spec.challengeDelayMs ?? 1000 }));
          return;
        }
        if (spec.wallFamily === 'check_then_deny_in_place') {
          const reference = `18.${newClearanceToken().slice(0, 8)}.${Math.floor(nowMs / 1000)}.${newClearanceToken().slice(0, 6)}`;
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(checkThenDenyInPlacePage({ host: opts.host, path: url.pathname, reference, delayMs: spec.challengeDelayMs ?? 1000 }));
          return;
        }
        if (fastly) {
          // Fastly answers its challenge with 200, to browsers and scripts alike.
          const c = newFastlyChallenge();
          fastlyChallenges.set(c.token, c);
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'private, no-store', via: '1.1 varnish' }).end(fastlyPage(c, url.pathname));
          return;
        }
        if (anubis) {
          // Anubis answers with 200 by default, to browsers and scripts alike.
          const c = newAnubisChallenge(spec.anubisDifficulty ?? 2);
          challenges.set(c.id, c);
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(anubisPage(c));
          return;
        }
        const fresh = newClearanceToken();
        issued.add(fresh);
        const page = interstitialPage({ token: fresh, delayMs: spec.challengeDelayMs ?? 1000, refuseWebdriver: kind === 'botwall', unknownFamily: spec.unknownWallFamily ?? false, secure: secure !== '', ...(spec.clearanceCookieDomain ? { cookieDomain: spec.clearanceCookieDomain } : {}) });
        res.writeHead(kind === 'botwall' ? 403 : 503, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
        return;
      }
    }
  };

  const serveTrap = (req: IncomingMessage, res: ServerResponse): void => {
    const target = req.url ?? '/';
    const nowMs = clock.now().getTime();
    const entry: SiteRequest = { seq: log.length + 1, path: target, client: classifyClient(req.rawHeaders), atMs: nowMs, kind: 'traps', address: (req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''), outcome: 'served' };
    log.push(entry);
    const self = listeners.main.origin;
    const answer = trapAnswer(target, { origin: self, offsite: opts.peers?.().find((s) => s.origin !== self)?.origin, sessionId: () => randomBytes(16).toString('hex') });
    if (answer === null) {
      entry.outcome = 'not_found';
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(answer.status, answer.headers).end(answer.body);
  };

  const listeners = await listen(spec, opts, handle);
  const server = listeners.main;

  return {
    name,
    domain: opts.host,
    origin: server.origin,
    plainOrigin: listeners.plain?.origin,
    connections: () => server.connections,
    get kind() {
      return kindNow(clock.now().getTime());
    },
    initialKind: spec.kind,
    urls: (count, from = 0) => Array.from({ length: count }, (_, i) => server.url(pagePath(kindNow(clock.now().getTime()), from + i))),
    requestLog: () => log,
    robotsLog: () => robotsRequests,
    stats: () => {
      const requests: Record<ClientClass, number> = { plain: 0, browser: 0 };
      let blocked = 0;
      let served = 0;
      for (const r of log) {
        requests[r.client] += 1;
        if (r.outcome === 'served') served += 1;
        else if (r.outcome === 'rate_limited' || r.outcome === 'challenge' || r.outcome === 'address_blocked') blocked += 1;
      }
      return { name, domain: opts.host, kind: current, initialKind: spec.kind, requests, pageRequests: log.length, blocked, served, changes: seen.map((c) => ({ ...c })), solves, solvedOn: [...solvedOn] };
    },
    close: () => Promise.all([server.close(), listeners.plain?.close()]).then(() => undefined),
  };
}

const DAY_MS = 86_400_000;

/**
 * The site's listeners: without TLS one plain-HTTP server; with it an HTTPS server presenting the certificate
 * SiteSpec.certificate asks for (the CA sent in its chain, as servers send intermediates) and a plain-HTTP one on another
 * port of the same address, one of the two redirecting every request to the other (SiteSpec.plainHttp).
 */
async function listen(
  spec: SiteSpec,
  opts: { host: string; port?: number; tls?: { ca: TestCa } },
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ main: TestServer; plain?: TestServer }> {
  if (!opts.tls) return { main: await startTestServer({ '*': handle }, { host: opts.host, port: opts.port ?? 0 }) };
  const { ca } = opts.tls;
  const kind = spec.certificate ?? 'valid';
  const leaf = ca.issue({
    hosts: kind === 'wrong_host' ? [`wrong-host.${opts.host}.invalid`] : [opts.host],
    ...(kind === 'expired' ? { notBefore: new Date(Date.now() - 2 * DAY_MS), notAfter: new Date(Date.now() - DAY_MS) } : {}),
  });
  const downgrade = spec.plainHttp === 'downgrade';
  const to = (origin: () => string) => (req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(301, { location: `${origin()}${req.url ?? '/'}`, 'cache-control': 'no-store' }).end();
  };
  let main: TestServer | undefined;
  let plain: TestServer | undefined;
  const hsts = (req: IncomingMessage, res: ServerResponse): void => {
    if (spec.hsts) res.setHeader('strict-transport-security', 'max-age=31536000');
    (downgrade ? to(() => plain!.origin) : handle)(req, res);
  };
  main = await startTestServer({ '*': hsts }, { host: opts.host, port: opts.port ?? 0, tls: { cert: leaf.cert + ca.cert, key: leaf.key } });
  try {
    plain = await startTestServer({ '*': downgrade ? handle : to(() => main!.origin) }, { host: opts.host, port: 0 });
  } catch (err) {
    await main.close();
    throw err;
  }
  return { main, plain };
}
