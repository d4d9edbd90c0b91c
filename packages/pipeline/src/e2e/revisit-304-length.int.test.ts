/**
 * A 304 that carries the Content-Length of the full page and no body, as RFC 9110 §8.6 allows and IIS, HTTP.sys and
 * ASP.NET send it. undici 7 checks the length of every response but HEAD's and fails this one ("0 of N bytes"): every
 * conditional revisit of such a site was a network_error, retried, and the link paused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { rawHttpHandler, staticArticle } from '@crawler/testkit';
import { VersionStore } from '@crawler/db';
import { startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let server: Server | undefined;
afterEach(async () => {
  await crawler?.cleanup();
  crawler = undefined;
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
});

describe('end to end: a 304 that declares the page length, as IIS sends it', () => {
  it('is a not-modified visit, on a kept-alive connection, every revisit', async () => {
    const body = Buffer.from(staticArticle({ title: 'iis' }));
    const answers: string[] = [];
    server = createServer(
      rawHttpHandler((head) => {
        const conditional = /if-none-match: "r1"/i.test(head);
        answers.push(conditional ? '304' : '200');
        const status = conditional ? '304 Not Modified' : '200 OK';
        const headers = Buffer.from(`HTTP/1.1 ${status}\r\nETag: "r1"\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\n\r\n`);
        // Kept alive: the next request comes on the same connection, after a 304 that sent no body.
        return { bytes: conditional ? headers : Buffer.concat([headers, body]), end: false };
      }),
    );
    await new Promise<void>((r) => server!.listen(0, '127.0.0.91', r));
    const origin = `http://127.0.0.91:${(server.address() as { port: number }).port}`;
    crawler = await startE2e('revisit_304_length', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:1', MAX_ATTEMPTS: '3' });
    const { accepted } = await crawler.runtime.enqueue([`${origin}/a`, `${origin}/b`]);
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    const versions = new VersionStore({ prisma: crawler.db.prisma });
    for (let pass = 2; pass <= 3; pass++) {
      const reopened = await versions.reopenForRevisit(accepted.map((a) => a.linkId));
      expect(reopened).toHaveLength(2);
      for (const r of reopened) await crawler.runtime.queues.enqueueRoute({ linkId: r.id, url: r.url, generation: r.generation });
      await crawler.runtime.waitUntilIdle();
    }
    for (const a of accepted) {
      const link = await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: a.linkId }, include: { attempts: { orderBy: { id: 'asc' } } } });
      const visits = await crawler.db.prisma.pageVisit.findMany({ where: { linkId: a.linkId }, orderBy: { id: 'asc' } });
      expect({ status: link.status, lastError: link.lastError }).toEqual({ status: 'done', lastError: null });
      expect(visits.map((v) => `${v.kind}:${v.httpStatus}`)).toEqual(['new:200', 'not_modified:304', 'not_modified:304']);
      // One attempt a visit, none failed: before, each revisit was a network_error, retried.
      expect(link.attempts.map((t) => `${t.httpStatus}/${t.errorType}`)).toEqual(['200/null', '304/null', '304/null']);
    }
    expect(answers.filter((a) => a === '304')).toHaveLength(4);
  }, 120_000);
});
