import { z } from 'zod';
import { migrate } from '@crawler/db';
import { UsageError, type Command } from '../command.js';

const Env = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgresql:// URL'),
});

/** Parse DATABASE_URL from the command's environment, failing with the variable's name and value. */
export function databaseUrlFrom(env: NodeJS.ProcessEnv): string {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    throw new UsageError(`DATABASE_URL ${parsed.error.issues[0]?.message ?? 'is invalid'} (got ${JSON.stringify(env.DATABASE_URL ?? null)})`);
  }
  return parsed.data.DATABASE_URL;
}

const command: Command = {
  async run(args, io) {
    if (args.length > 0) throw new UsageError(`unexpected arguments: ${args.join(' ')}`);
    const result = await migrate(databaseUrlFrom(io.env));
    for (const name of result.applied) io.stdout.write(`applied ${name}\n`);
    io.stdout.write(`${result.applied.length} applied, ${result.alreadyApplied.length} already applied\n`);
    return 0;
  },
};

export default command;
