import { parseArgs } from 'node:util';
import { normalizeUrl, stripTrackingParams } from '@crawler/core';
import { LinkStore, createPrismaClient } from '@crawler/db';
import { CONTENT_FORMATS, UnsupportedFormatError, noContentReason, readContent, type ContentFormat } from '@crawler/export';
import { UsageError, type Command } from '../command.js';
import { databaseUrlFrom } from '../env.js';

const USAGE = 'usage: crawl content <link-id|url> [--format raw|text|markdown] [--version N]';
const MAX_VERSION = 2_147_483_647;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { format: { type: 'string', default: 'raw' }, version: { type: 'string' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message} (${USAGE})`);
    }
    const [target, ...rest] = parsed.positionals;
    if (!target || rest.length > 0) throw new UsageError(USAGE);
    const format = parsed.values.format as ContentFormat;
    if (!CONTENT_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${CONTENT_FORMATS.join(', ')} (got ${JSON.stringify(format)})`);
    let version: number | undefined;
    if (parsed.values.version !== undefined) {
      version = Number(parsed.values.version);
      // Versions are Postgres integers, as GET /links/:id/content?version= bounds them.
      if (!/^\d+$/.test(parsed.values.version) || version < 1 || version > MAX_VERSION) {
        throw new UsageError(`--version must be a version number from 1 to ${MAX_VERSION} (got ${JSON.stringify(parsed.values.version)})`);
      }
    }
    let linkUrl: string | null = null;
    if (!UUID.test(target)) {
      try {
        linkUrl = normalizeUrl(target);
      } catch (err) {
        throw new UsageError(`${JSON.stringify(target)} is neither a link id nor a URL: ${(err as Error).message}`);
      }
    }
    const prisma = createPrismaClient(databaseUrlFrom(io.env), { maxConnections: 2 });
    try {
      const store = new LinkStore(prisma);
      // The link a posted URL became (tracking parameters stripped), else one stored with them before they were.
      const linkId = linkUrl === null ? target.toLowerCase() : ((await store.idByUrl(stripTrackingParams(linkUrl))) ?? (await store.idByUrl(linkUrl)));
      if (!linkId) {
        io.stderr.write(`no link for ${linkUrl}\n`);
        return 1;
      }
      const content = await readContent(prisma, linkId, format, version);
      if (!content && version !== undefined) {
        io.stderr.write(`link ${linkId} has no stored version ${version}\n`);
        return 1;
      }
      if (!content) {
        io.stderr.write(`${await noContentReason(prisma, linkId)}\n`);
        return 1;
      }
      const out = Buffer.from(content.body.buffer, content.body.byteOffset, content.body.byteLength);
      await new Promise<void>((resolve, reject) => io.stdout.write(out, (err) => (err ? reject(err) : resolve())));
      if (format !== 'raw' && !out.subarray(-1).equals(Buffer.from('\n'))) io.stdout.write('\n');
      return 0;
    } catch (err) {
      if (err instanceof UnsupportedFormatError) {
        io.stderr.write(`${err.message}\n`);
        return 1;
      }
      throw err;
    } finally {
      await prisma.$disconnect();
    }
  },
};

export default command;
