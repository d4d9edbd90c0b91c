import type { FastifyInstance } from 'fastify';
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
