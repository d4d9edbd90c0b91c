import type { FastifyInstance, FastifyRequest } from 'fastify';
import bearerAuth from '@fastify/bearer-auth';
import { BULL_BOARD_PATH } from './admin.js';

/** Routes answered without an API key: the liveness and readiness probes, and Bull Board (behind its own basic auth). */
function isPublicRoute(route: string | undefined): boolean {
  return route === '/healthz' || route === '/readyz' || (route !== undefined && (route === BULL_BOARD_PATH || route.startsWith(`${BULL_BOARD_PATH}/`) || route.startsWith(`${BULL_BOARD_PATH}*`)));
}

/**
 * Require `Authorization: Bearer <key>` (the scheme in any case) on every route but the public ones, compared in constant time with each
 * configured key (@fastify/bearer-auth). The decision uses the route Fastify matched, not the raw path, so
 * `/admin/queues/../links` cannot borrow Bull Board's exemption; an unknown path asks for a key before it 404s.
 */
export async function registerApiKeyAuth(app: FastifyInstance, keys: string[]): Promise<void> {
  await app.register(bearerAuth, {
    keys: new Set(keys),
    addHook: false,
    verifyErrorLogLevel: 'info',
    // The scheme is case-insensitive (RFC 7235 §2.1): `bearer <key>` is the same as `Bearer <key>`.
    specCompliance: 'rfc6749',
  });
  const verify = app.verifyBearerAuth!;
  app.addHook('onRequest', async (req, reply) => {
    if (isPublicRoute(req.routeOptions.url)) return;
    const ok = await new Promise<boolean>((resolve) => verify(req, reply, (err?: Error) => resolve(!err)));
    if (!ok) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="crawler"')
        .send({ error: 'unauthorized', message: 'send Authorization: Bearer <API key>' });
    }
  });
}

// Query parameters whose value is a credential: a client that puts its API key in the URL (?api_key=…) is refused,
// but Fastify logs the request line before that.
const SECRET_PARAM = /key|token|secret|passw|auth|sig/i;

/** A request URL for the log, the values of credential-like query parameters masked. */
export function maskedRequestUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const pairs = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq === -1) return pair;
    let name = pair.slice(0, eq);
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // A malformed escape: the name is judged as written.
    }
    return SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=[redacted]` : pair;
  });
  return `${url.slice(0, q + 1)}${pairs.join('&')}`;
}

/** The request fields Fastify logs, with the URL masked. */
export function serializeRequest(req: FastifyRequest) {
  return { method: req.method, url: maskedRequestUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort };
}
