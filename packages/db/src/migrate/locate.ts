import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Find the repository's `prisma/migrations` by walking up from `start` (by default this compiled file), so it works
 * from `src/` under vitest, from `dist/` and from a deployed tree alike.
 */
export function locateMigrationsDir(start: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = resolve(start);
  for (;;) {
    const candidate = join(dir, 'prisma', 'migrations');
    if (existsSync(candidate) && statSync(candidate).isDirectory()) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no prisma/migrations directory above ${start}`);
    dir = parent;
  }
}
