import { accessSync, constants, statSync } from 'node:fs';

/**
 * Why `path` cannot be launched as Chromium, in words (`no such file`, `is a directory`, `is not executable`), or
 * null when it is an executable file. Meant for start-up: a browser pool launches lazily, so a wrong path would
 * otherwise surface only as the first browser job's failure.
 */
export function chromiumExecutableProblem(path: string): string | null {
  let stats;
  try {
    stats = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file' : `cannot be read (${code ?? (err as Error).message})`;
  }
  if (stats.isDirectory()) return 'is a directory, not the Chromium executable';
  if (!stats.isFile()) return 'is not a file';
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return 'is not executable by this user';
  }
  return null;
}
