#!/usr/bin/env node
// `npx sim-web …`: a simulated web of local sites (plain, JS-rendered, rate-limited, files, and bot walls) to point
// the crawler at. Runs the build's dist/cli.js (`npm run build` at the repository's root first).
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('sim-web: not built yet; run `npm run build` at the repository root first\n');
  process.exit(1);
}
const { main } = await import(cli.href);
process.exitCode = await main(process.argv.slice(2));
