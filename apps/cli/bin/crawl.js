#!/usr/bin/env node
// The `crawl` command (`npx crawl …` at the repository's root). A committed file, not dist/main.js: npm links a
// workspace's bin into node_modules/.bin only when its target exists at install time, and dist/ only exists after
// the build that follows the install. It runs the build's bundle (dist/bundle/, see scripts/bundle.mjs), which
// starts in a fraction of the time of the ~400 modules of dist/main.js; CRAWL_UNBUNDLED=1 runs those instead.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/bundle/main.js', import.meta.url);
const modules = new URL('../dist/main.js', import.meta.url);
const main = process.env.CRAWL_UNBUNDLED !== '1' && existsSync(bundle) ? bundle : modules;
if (!existsSync(main)) {
  process.stderr.write('crawl: the CLI is not built yet; run `npm run build` (or `npm run setup`) at the repository root first\n');
  process.exit(1);
}
await import(main.href);
