import { migrate } from '@crawler/db';
import { UsageError, type Command } from '../command.js';
import { databaseUrlFrom } from '../env.js';

const USAGE = 'usage: crawl migrate  (DATABASE_URL names the database; created when it does not exist)';

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    if (args.length > 0) throw new UsageError(`unexpected arguments: ${args.join(' ')}\n${USAGE}`);
    const result = await migrate(databaseUrlFrom(io.env));
    if (result.createdDatabase !== undefined) io.stdout.write(`created database ${result.createdDatabase}\n`);
    for (const name of result.applied) io.stdout.write(`applied ${name}\n`);
    io.stdout.write(`${result.applied.length} applied, ${result.alreadyApplied.length} already applied\n`);
    if (result.frozen > 0) io.stdout.write(`${result.frozen} stored rows restored from another server marked as committed before any export\n`);
    return 0;
  },
};

export default command;
