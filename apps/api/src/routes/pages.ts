import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CrawlerError } from '@crawler/core';
import { DB_ERROR_CODES, VersionStore, currentExportCursor, isCursorForeign, parseExportCursor, type PrismaClient } from '@crawler/db';
import { CONTENT_FORMATS, EXPORT_FORMATS, UnsupportedFormatError, exportContentType, exportPages, noContentReason, readContent } from '@crawler/export';
import { DomainFilter } from './links.js';

/** What the pages routes need. */
export interface PagesRouteDeps {
  prisma: PrismaClient;
}

const LinkId = z.uuid();
const ContentQuery = z
  .object({
    format: z.enum(CONTENT_FORMATS).default('raw'),
    /** A version number (1, 2, … in fetch order); absent: the latest. */
    version: z.coerce.number().int().positive().max(2_147_483_647).optional(),
  })
  .strict();
const ExportQuery = z
  .object({
    format: z.enum(EXPORT_FORMATS).default('jsonl'),
    // An ISO time, or a date (its UTC midnight), as `crawl export --since` takes them.
    since: z.union([z.iso.datetime({ offset: true }), z.iso.date()]).optional(),
    status: z.enum(['queued', 'routing', 'fetching', 'paused', 'done', 'failed']).optional(),
    domain: DomainFilter.optional(),
    /** JSONL: `all` for every stored version, not only each page's latest. */
    versions: z.enum(['latest', 'all']).default('latest'),
    /** Resume after the export that answered this `X-Crawler-Cursor`. */
    after: z.string().refine((c) => parseExportCursor(c) !== null, 'expected a cursor an earlier export answered in X-Crawler-Cursor').optional(),
  })
  .strict();

/**
 * A stored URL as a header value. URLs are stored as WHATWG serialises them, ASCII with their own percent escapes, so
 * they go as they are (encodeURI would turn `%C3%A9` into `%25C3%25A9`); anything a header cannot carry (spaces,
 * controls, non-ASCII) is percent-encoded as UTF-8.
 */
function headerSafeUrl(url: string): string {
  return url.replace(/[^\x21-\x7e]/gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

/**
 * If-None-Match as RFC 9110 §13.1.2 reads it: `*`, or a list of entity tags compared weakly, so `W/"<sha>"` (what a
 * gzipping proxy in front of the API turns our tag into) still answers 304.
 */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.trim() === '*' || header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

function queryError(issues: z.core.$ZodIssue[]) {
  return { error: 'invalid_query', message: issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ') };
}

/** GET /links/:id/content (the stored page, raw or converted) and GET /export (every stored page, streamed). */
export function registerPagesRoutes(app: FastifyInstance, deps: PagesRouteDeps): void {
  app.get<{ Params: { id: string } }>('/links/:id/content', async (req, reply) => {
    const id = LinkId.safeParse(req.params.id);
    if (!id.success) return reply.code(400).send({ error: 'invalid_id', message: `link ids are UUIDs (got ${JSON.stringify(req.params.id)})` });
    const query = ContentQuery.safeParse(req.query);
    if (!query.success) return reply.code(400).send(queryError(query.error.issues));
    let content;
    try {
      content = await readContent(deps.prisma, id.data, query.data.format, query.data.version);
    } catch (err) {
      if (err instanceof UnsupportedFormatError) return reply.code(415).send({ error: err.code, message: err.message });
      throw err;
    }
    if (!content && query.data.version !== undefined) {
      return reply.code(404).send({ error: 'no_version', message: `link ${id.data} has no stored version ${query.data.version} (see GET /links/${id.data}/versions)` });
    }
    if (!content) return reply.code(404).send({ error: 'no_content', message: await noContentReason(deps.prisma, id.data) });
    if (noneMatch(req.headers['if-none-match'], content.etag)) return reply.code(304).header('etag', content.etag).send();
    return reply
      .header('content-type', content.contentType)
      .header('etag', content.etag)
      .header('content-length', content.body.byteLength)
      .header('x-crawler-final-url', headerSafeUrl(content.page.finalUrl))
      .header('x-crawler-fetched-at', content.page.fetchedAt.toISOString())
      .header('x-crawler-fetcher', content.page.fetcher)
      .header('x-crawler-version', content.page.version)
      // A stored page is someone else's HTML: never let a browser run it in the API's origin.
      .header('content-security-policy', "sandbox; default-src 'none'")
      .header('x-content-type-options', 'nosniff')
      .send(Buffer.from(content.body.buffer, content.body.byteOffset, content.body.byteLength));
  });

  app.get<{ Params: { id: string } }>('/links/:id/versions', async (req, reply) => {
    const id = LinkId.safeParse(req.params.id);
    if (!id.success) return reply.code(400).send({ error: 'invalid_id', message: `link ids are UUIDs (got ${JSON.stringify(req.params.id)})` });
    const store = new VersionStore({ prisma: deps.prisma });
    const link = await store.linkOf(id.data);
    if (!link) return reply.code(404).send({ error: 'not_found', message: `no link ${id.data}` });
    const versions = await store.list(id.data);
    return {
      linkId: link.id,
      url: link.url,
      lastVisitChanged: link.lastVisitChanged,
      versions: versions.map((v) => ({
        version: v.version, fetchedAt: v.fetchedAt.toISOString(), httpStatus: v.httpStatus, sha256: v.sha256, sizeBytes: v.sizeBytes, fetcher: v.fetcher,
        unchangedVisits: v.unchangedVisits, lastSeenAt: v.lastSeenAt?.toISOString() ?? null,
      })),
    };
  });

  app.get('/export', async (req, reply) => {
    const query = ExportQuery.safeParse(req.query);
    if (!query.success) return reply.code(400).send(queryError(query.error.issues));
    const { format, since, status, domain, versions, after } = query.data;
    // Known before the first byte, so it goes in a header; it is the next export's `after` once this body is whole.
    let upTo: string;
    try {
      upTo = await currentExportCursor(deps.prisma);
    } catch (err) {
      // Rows restored from another server's dump that `crawl migrate` has not marked yet: say so, not "try again".
      if (err instanceof CrawlerError && err.code === DB_ERROR_CODES.migration) return reply.code(503).send({ error: err.code, message: err.message });
      throw err;
    }
    if (after && isCursorForeign(after, upTo)) {
      return reply.code(409).send({ error: 'cursor_ahead', message: `cursor ${after} is not from this database (${upTo}): it comes from another database or from before a restore; export without after= to start again` });
    }
    const stream = Readable.from(
      exportPages(deps.prisma, { format, since: since ? new Date(since) : null, linkStatus: status ?? null, domain: domain ?? null, allVersions: versions === 'all', after: after ?? null, upTo }),
      { objectMode: false },
    );
    stream.on('error', (err) => req.log.error({ err }, 'export stream failed'));
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    return reply
      .header('content-type', exportContentType(format))
      .header('x-crawler-cursor', upTo)
      .header('content-disposition', `attachment; filename="crawler-export-${stamp}.${format === 'warc' ? 'warc.gz' : 'jsonl'}"`)
      .send(stream);
  });
}
