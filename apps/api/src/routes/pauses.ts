import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DomainPauses } from '@crawler/pipeline';

/** What the pause routes need: the fleet's pauses (DomainPauses over Redis and Postgres). */
export interface PausesRouteDeps {
  pauses: Pick<DomainPauses, 'list' | 'lift'>;
}

// A host name as the gate keys it: letters, digits, dots, dashes (an IPv6 literal in brackets, or an IPv4 literal).
const Domain = z.string().trim().toLowerCase().min(1).max(253).regex(/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d+)?$/);

/** GET /pauses (paused domains: reason, until, paused links) and DELETE /pauses/:domain (lift one). */
export function registerPausesRoutes(app: FastifyInstance, deps: PausesRouteDeps): void {
  app.get('/pauses', async () => ({ pauses: await deps.pauses.list() }));
  app.delete<{ Params: { domain: string } }>('/pauses/:domain', async (req, reply) => {
    const domain = Domain.safeParse(req.params.domain);
    if (!domain.success) return reply.code(400).send({ error: 'invalid_domain', message: 'expected a host name, e.g. shop.example' });
    return deps.pauses.lift(domain.data);
  });
}
