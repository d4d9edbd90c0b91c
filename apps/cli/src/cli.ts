import { COMMANDS } from './commands/index.js';
import { InterruptedError, UsageError, type Command, type CommandIO } from './command.js';
import { withOptionSuggestion } from './option-suggestion.js';

/** Run one `crawl` invocation; resolves to the exit code. Only the named command's module is imported. */
export async function runCli(argv: string[], io: CommandIO): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write('usage: crawl <command> [options]\n\ncommands:\n');
    for (const [cmd, entry] of Object.entries(COMMANDS)) io.stdout.write(`  ${cmd.padEnd(12)} ${entry.summary}\n`);
    return name ? 0 : 2;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.stderr.write(`crawl: unknown command '${name}' (see 'crawl --help')\n`);
    return 2;
  }
  let command: Command | undefined;
  try {
    command = await entry.load();
    if (wantsHelp(args)) {
      io.stdout.write(`crawl ${name}: ${entry.summary}\n${command.usage}\n`);
      return 0;
    }
    return await command.run(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      // A mistyped option gets the command's closest one (every command's parseArgs error comes through here).
      io.stderr.write(`crawl ${name}: ${command ? withOptionSuggestion(err.message, command.usage) : err.message}\n`);
      return 2;
    }
    if (err instanceof InterruptedError) {
      io.stderr.write(`crawl ${name}: interrupted: ${err.message}\n`);
      return 130;
    }
    // A SIGTERM or SIGINT stopped a command that waits for the crawl to end (by name: this module does not load the
    // pipeline for every command). The workers finished their pages in flight; nothing is lost. A link the router
    // already sent to a fetcher keeps its fetch job in Redis, and reads 'queued' once no process serves that fetcher
    // (the runtime's close): the next worker takes that job as it is, without routing the link again.
    if (err instanceof Error && err.name === 'CrawlerStoppedError') {
      io.stderr.write(
        `crawl ${name}: interrupted: the pages in flight were finished and stored; the links not fetched yet keep their jobs in Redis ` +
          "(in Postgres they read 'queued'; 'fetching' while another running process serves their fetcher) and are fetched by the next `crawl run` or `crawl crawl`\n",
      );
      return 130;
    }
    if (await isSchemaMissing(err)) {
      io.stderr.write(`crawl ${name}: the database is not migrated (${lastCause(err)}): run \`npx crawl migrate\` against DATABASE_URL first\n`);
      return 1;
    }
    const pg = await postgresProblem(err, io.env.DATABASE_URL);
    if (pg) {
      io.stderr.write(`crawl ${name}: ${pg}\n`);
      return 1;
    }
    const refused = redisRefusal(err);
    if (refused) {
      io.stderr.write(`crawl ${name}: ${refused}\n`);
      return 1;
    }
    io.stderr.write(`crawl ${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}

/**
 * Redis answering but refusing writes, or not answering at all, in words that say what to do (null for any other error). Links are written to
 * Postgres before their jobs go to Redis, so those already accepted are not lost: the reconciler gives them their
 * jobs once Redis takes writes again.
 */
export function redisRefusal(err: unknown): string | null {
  const message = err instanceof Error ? err.message : '';
  const why = /^OOM command not allowed/.test(message)
    ? "Redis is full: it has reached its maxmemory and evicts nothing (maxmemory-policy noeviction, which BullMQ needs), so it refuses every write. Free memory or raise it (redis-cli INFO memory; CONFIG SET maxmemory …)"
    : /^MISCONF/.test(message)
      ? 'Redis refuses writes because it cannot save its snapshot to disk (MISCONF): see its log, free disk space or fix the directory it writes to'
      : /^READONLY/.test(message)
        ? 'REDIS_URL points at a read-only replica: point it at the primary'
        : null;
  if (!why) return redisUnreachable(err);
  return `${why}. Nothing was lost: links already accepted are in Postgres, and workers give them their jobs once Redis takes writes again (or run \`crawl reconcile\`). Redis said: ${message.split('\n')[0]!.replace(/ script: .*$/, '')}`;
}

/**
 * A Redis that does not answer, for a command that reads it once (the producer connection gives a command up after a
 * few reconnect attempts; commands that run workers wait for Redis instead). null for any other error.
 */
function redisUnreachable(err: unknown): string | null {
  if (!(err instanceof Error) || (err.name !== 'MaxRetriesPerRequestError' && !/^Redis did not take the route jobs within/.test(err.message))) return null;
  return 'Redis does not answer (no connection through several reconnect attempts): check that it runs and that REDIS_URL (or REDIS_CLUSTER_NODES, REDIS_SENTINELS) names it';
}

/**
 * A database the migrations were not applied to (@crawler/db's verdict). Loaded only on this error path: the commands
 * that reach Postgres have loaded the package already, the others never get here with such an error.
 */
async function isSchemaMissing(err: unknown): Promise<boolean> {
  if (typeof err !== 'object' || err === null) return false;
  const { isSchemaMissingError } = await import('@crawler/db');
  return isSchemaMissingError(err);
}

/**
 * Postgres not there for the command, in one line that says what to do (null for any other error): unreachable
 * (@crawler/db's db_unavailable, or the driver's own connect error to DATABASE_URL's port, as a producer command's
 * first statement meets it), the database missing (3D000: a new user who has not run the setup), or the login refused
 * (28P01, 28000). The driver's words name the host, port, database or user, never the password.
 */
export async function postgresProblem(err: unknown, databaseUrl: string | undefined): Promise<string | null> {
  if (typeof err !== 'object' || err === null) return null;
  // Loaded only on this error path, as isSchemaMissing does.
  const { dbErrorCodeOf } = await import('@crawler/db');
  let port = '5432';
  let host = '';
  try {
    if (databaseUrl) ({ port, hostname: host } = new URL(databaseUrl));
    port ||= '5432';
  } catch {
    // An unparsable DATABASE_URL is refused by the config before any statement.
  }
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = dbErrorCodeOf(e);
    const said = lastLine((e as { message?: unknown }).message);
    if (code === 'db_unavailable') return `Postgres does not answer (${said}): check that it runs and that DATABASE_URL names it`;
    if (code === '3D000') return `the database DATABASE_URL names does not exist (${said}): create it (\`createdb\`, or \`npm run setup\` for the default one) and run \`npx crawl migrate\``;
    if (code === '28P01' || code === '28000') return `Postgres refused the login (${said}): check the user and password in DATABASE_URL`;
    // A connect error is Postgres' when it names DATABASE_URL's port (its own, or the first of an AggregateError's:
    // "localhost" tried over IPv4 and IPv6), a failed lookup when it names its host.
    const net = e as { port?: unknown; hostname?: unknown; errors?: Array<{ port?: unknown }> };
    const refused = typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/.test(code);
    const ours = String(net.port ?? net.errors?.[0]?.port) === port || (host !== '' && net.hostname === host);
    if (refused && ours) return `Postgres does not answer (${said}): check that it runs and that DATABASE_URL names it`;
  }
  return null;
}

/** The last line of the innermost message of an error's causes: the driver's own words ('relation "links" does not exist'). */
function lastCause(err: unknown): string {
  let e = err as { cause?: unknown; message?: unknown };
  for (let depth = 0; typeof e.cause === 'object' && e.cause !== null && depth < 5; depth++) e = e.cause as typeof e;
  return lastLine(e.message);
}

/** The last non-blank line of a message (a Prisma error's first lines are blank or name the call). */
function lastLine(message: unknown): string {
  return String(message ?? '').split('\n').filter((l) => l.trim() !== '').at(-1) ?? '';
}

/** `--help` or `-h` among the options (not after `--`, where it is an argument). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}
