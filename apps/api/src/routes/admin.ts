import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fastifyBasicAuth from '@fastify/basic-auth';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { BullBoardCredentials } from '../env.js';

/** The `<link>` to Google Fonts in Bull Board's page (@bull-board/ui index.ejs). */
const EXTERNAL_FONTS = /<link[^>]+href="https:\/\/fonts\.(googleapis|gstatic)\.com[^"]*"[^>]*>\s*/g;

/** Where Bull Board is mounted. */
export const BULL_BOARD_PATH = '/admin/queues';

// Hash both sides so the comparison takes the same time whatever the lengths: no timing hint about the secret.
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Bull Board over `queues`, behind HTTP basic auth. Without credentials (development with no password set) the
 * path answers 404 with how to turn it on, rather than serving the board open. Read-only unless
 * `credentials.readOnly` is false: Bull Board then answers its actions 405 and hides their buttons.
 */
export async function registerBullBoard(app: FastifyInstance, queues: Array<Queue | { queue: Queue; label: string }>, credentials: BullBoardCredentials | null): Promise<void> {
  if (!credentials) {
    app.all(`${BULL_BOARD_PATH}*`, async (_req, reply) =>
      reply.code(404).send({ error: 'bull_board_disabled', message: 'set BULL_BOARD_USER and BULL_BOARD_PASSWORD to enable Bull Board' }),
    );
    return;
  }
  // An encapsulated scope: the auth hook guards the board's routes and nothing else.
  await app.register(async (scope) => {
    await scope.register(fastifyBasicAuth, {
      authenticate: { realm: 'crawler queues' },
      validate: async (user, password) => {
        // Evaluate both so a wrong user costs the same as a wrong password.
        const ok = [sameSecret(user, credentials.user), sameSecret(password, credentials.password)].every(Boolean);
        if (!ok) return new Error('invalid credentials');
      },
    });
    scope.addHook('onRequest', scope.basicAuth);
    // The board's page links Google Fonts: a request to the internet from every operator's browser (and a wait
    // where there is none). Its fonts fall back to the system's sans-serif and monospace.
    scope.addHook('onSend', async (_req, reply, payload) => {
      if (typeof payload !== 'string' || !String(reply.getHeader('content-type') ?? '').startsWith('text/html')) return payload;
      return payload.replace(EXTERNAL_FONTS, '');
    });
    const serverAdapter = new FastifyAdapter();
    serverAdapter.setBasePath(BULL_BOARD_PATH);
    const readOnlyMode = credentials.readOnly ?? true;
    createBullBoard({
      // A label (`s1/`) tells apart the same queue of different shards, which the board would otherwise merge by name.
      queues: queues.map((q) => ('label' in q ? new BullMQAdapter(q.queue, { readOnlyMode, prefix: q.label }) : new BullMQAdapter(q, { readOnlyMode }))),
      serverAdapter,
      options: { uiConfig: { boardTitle: 'Crawler queues' } },
    });
    await scope.register(serverAdapter.registerPlugin(), { prefix: BULL_BOARD_PATH });
  });
}
