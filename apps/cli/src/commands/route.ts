import { parseArgs } from 'node:util';
import { FETCHERS, canonicalFetcherName } from '@crawler/core';
import { RouteStore, createPrismaClient } from '@crawler/db';
import { UsageError, type Command } from '../command.js';
import { databaseUrlFrom } from '../env.js';
import { formatTable } from './stats.js';

const USAGE = 'usage: crawl route set <domain> <fetcher> | crawl route list | crawl route delete <domain>   [--json]';
const KNOWN = new Set<string>(Object.values(FETCHERS));

/** A fetcher name for the legacy table: a known fetcher or its alias (direct_access → simple_http), else a usage error. */
export function validateFetcherName(raw: string): string {
  const name = canonicalFetcherName(raw);
  if (!KNOWN.has(name)) throw new UsageError(`unknown fetcher '${raw}' (expected one of ${[...KNOWN].join(', ')}, or the alias direct_access)`);
  return name;
}

/** A bare domain: no scheme, path or port; lower-cased. */
export function validateDomain(raw: string): string {
  const d = raw.trim().toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(d)) {
    throw new UsageError(`'${raw}' is not a domain (give a host name like example.com, without scheme, port or path)`);
  }
  return d;
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    const [action, ...rest] = parsed.positionals;
    const json = parsed.values.json === true;
    const arity: Record<string, number> = { set: 2, list: 0, delete: 1 };
    if (!action || !(action in arity)) throw new UsageError(`expected set, list or delete\n${USAGE}`);
    if (rest.length !== arity[action]) throw new UsageError(`route ${action} takes ${arity[action]} argument(s), got ${rest.length}\n${USAGE}`);
    // Validate before connecting: a typo should not need a database to be reported.
    const domain = action === 'list' ? '' : validateDomain(rest[0]!);
    const fetcher = action === 'set' ? validateFetcherName(rest[1]!) : '';
    const prisma = createPrismaClient(databaseUrlFrom(io.env));
    try {
      const routes = new RouteStore({ prisma });
      if (action === 'set') {
        const route = await routes.set(domain, fetcher);
        io.stdout.write(json ? `${JSON.stringify(route)}\n` : `${route.domain} → ${route.fetcher}\n`);
        return 0;
      }
      if (action === 'delete') {
        const deleted = await routes.delete(domain);
        io.stdout.write(json ? `${JSON.stringify({ domain, deleted })}\n` : deleted ? `deleted the route for ${domain}\n` : `no route for ${domain}\n`);
        return deleted ? 0 : 1;
      }
      const list = await routes.list();
      if (json) io.stdout.write(`${JSON.stringify(list)}\n`);
      else io.stdout.write(list.length === 0 ? 'no routes\n' : `${formatTable(['domain', 'fetcher'], list.map((r) => [r.domain, r.fetcher]))}\n`);
      return 0;
    } finally {
      await prisma.$disconnect();
    }
  },
};

export default command;
