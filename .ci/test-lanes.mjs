// The test suite in two lanes, longest package first. On CI's 2 cores, `turbo run test --concurrency=2` started the
// pipeline package (about 13 minutes of tests alone) only after the small packages, 4–5 minutes in, and the suite
// then ended with the pipeline running alone. Here a lane that frees takes the next package of a queue that starts
// with the longest ones (longest-processing-time first), so both lanes stay busy to the end. Each package runs its
// own `test` script; its lines are prefixed `<name>:test: ` as turbo's are. Every package runs, whatever fails
// (turbo's --continue); the exit status is 1 when any failed. The packages are built first, through turbo.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
const LANES = Number(process.env.TEST_LANES ?? 2);
// Longest first, by their wall time in a full run (seconds, CI 2026-11-28): pipeline ~800, fetchers ~370, cli ~260,
// sim-web ~100, db ~75, apps/fetcher ~70, api ~55; the rest are under a minute each and go in any order after.
const HEAVY = ['@crawler/pipeline', '@crawler/fetchers', '@crawler/cli', '@crawler/sim-web', '@crawler/db', '@crawler/fetcher', '@crawler/api'];

const build = spawnSync('npx', ['turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const workspaces = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).workspaces;
const packages = [];
for (const pattern of workspaces) {
  const dirs = pattern.endsWith('/*') ? fs.readdirSync(path.join(root, pattern.slice(0, -2))).map((d) => path.join(pattern.slice(0, -2), d)) : [pattern];
  for (const dir of dirs) {
    const file = path.join(root, dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (pkg.scripts?.test) packages.push({ name: pkg.name, dir: path.join(root, dir) });
  }
}
const rank = (name) => (HEAVY.includes(name) ? HEAVY.indexOf(name) : HEAVY.length);
const queue = packages.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));

const failed = [];
const started = Date.now();
// A signal to this script (a CI job's timeout, a `kill`) stops the packages' test runs too, not only the lanes.
const children = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    queue.length = 0;
    for (const child of children) child.kill(signal);
    process.exitCode = 130;
  });
}
const seconds = () => ((Date.now() - started) / 1000).toFixed(0);

function run(pkg) {
  return new Promise((resolve) => {
    const label = `${pkg.name}:test`;
    console.log(`${label}: started at ${seconds()} s`);
    const child = spawn('npm', ['run', 'test', '--silent'], { cwd: pkg.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => console.log(`${label}: ${line}`));
    }
    child.on('close', (code) => {
      children.delete(child);
      if (code !== 0) failed.push(pkg.name);
      console.log(`${label}: ${code === 0 ? 'passed' : `failed (exit ${code})`}, ended at ${seconds()} s`);
      resolve();
    });
  });
}

async function lane() {
  for (let pkg = queue.shift(); pkg; pkg = queue.shift()) await run(pkg);
}

await Promise.all(Array.from({ length: LANES }, lane));
if (failed.length > 0) console.log(`\npackages with failures: ${failed.join(', ')}`);
if (process.exitCode !== 130) process.exitCode = failed.length > 0 ? 1 : 0;
