import type { FastifyReply } from 'fastify';
import type { z } from 'zod';

/** Issues shown in a 400 answer: enough to fix a request, never the whole list of a hostile body. */
const MAX_SHOWN_ISSUES = 5;

/** Answer 400 `invalid_body`: what the route expects, and the first issues zod found, as path and message. */
export function sendInvalidBody(reply: FastifyReply, expected: string, error: z.ZodError): FastifyReply {
  return reply.code(400).send({ error: 'invalid_body', message: expected, issues: shownIssues(error.issues) });
}

/**
 * The issues as path and message, at most MAX_SHOWN_ISSUES. A body that matches none of a union's shapes (`{"urls": …}`
 * or `{"links": …}`) is explained by the shape it came closest to, so `{"urls": […], "priority": "1"}` names
 * `priority`, not the whole body.
 */
export function shownIssues(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): Array<{ path: string; message: string }> {
  const out = issues.flatMap((i) => {
    const path = [...prefix, ...i.path];
    if (i.code === 'invalid_union' && i.errors.length > 0) {
      // The fewest issues; between equals, the shape the value got furthest into (an object with one wrong field
      // rather than "expected string").
      const depth = (branch: readonly z.core.$ZodIssue[]) => Math.max(0, ...branch.map((b) => b.path.length));
      const closest = i.errors.reduce((a, b) => (b.length < a.length || (b.length === a.length && depth(b) > depth(a)) ? b : a));
      if (closest.length > 0) return shownIssues(closest, path);
    }
    return [{ path: path.map(String).join('.'), message: i.message }];
  });
  return out.slice(0, MAX_SHOWN_ISSUES);
}
