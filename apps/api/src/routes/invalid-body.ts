import type { FastifyReply } from 'fastify';
import type { z } from 'zod';

/** Issues shown in a 400 answer: enough to fix a request, never the whole list of a hostile body. */
const MAX_SHOWN_ISSUES = 5;

/** Answer 400 `invalid_body`: what the route expects, and the first issues zod found, as path and message. */
export function sendInvalidBody(reply: FastifyReply, expected: string, error: z.ZodError): FastifyReply {
  return reply.code(400).send({
    error: 'invalid_body',
    message: expected,
    issues: error.issues.slice(0, MAX_SHOWN_ISSUES).map((i) => ({ path: i.path.join('.'), message: i.message })),
  });
}
