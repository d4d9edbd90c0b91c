#!/usr/bin/env node
// The `crawl` command (`npx crawl …` at the repository's root). A committed file, not dist/main.js: npm links a
// workspace's bin into node_modules/.bin only when its target exists at install time, and dist/ only exists after
// the build that follows the install.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('crawl: the CLI is not built yet; run `npm run build` (or `npm run setup`) at the repository root first\n');
  process.exit(1);
}
await import(main.href);
