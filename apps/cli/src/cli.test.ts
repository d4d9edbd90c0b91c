import { describe, expect, it, vi } from 'vitest';
import { captureIO as capture } from './__fixtures__/capture-io.js';
import { COMMANDS } from './commands/index.js';
import { runCli } from './cli.js';

// `crawl --help` must not import what the commands need: any of these loading fails the test.
const heavyLoads: string[] = [];
vi.mock('@crawler/pipeline', () => {
  heavyLoads.push('@crawler/pipeline');
  return {};
});
vi.mock('@crawler/db', () => {
  heavyLoads.push('@crawler/db');
  return {};
});
vi.mock('@crawler/fetchers', () => {
  heavyLoads.push('@crawler/fetchers');
  return {};
});


describe('crawl --help', () => {
  it('lists every command with its summary without importing any command', async () => {
    const t = capture();
    expect(await runCli(['--help'], t.io)).toBe(0);
    for (const [name, entry] of Object.entries(COMMANDS)) expect(t.out()).toContain(`  ${name.padEnd(12)} ${entry.summary}\n`);
    expect(Object.keys(COMMANDS).length).toBeGreaterThanOrEqual(11);
    expect(heavyLoads).toEqual([]);
  });

  it('prints the same list and exits 2 without a command', async () => {
    const t = capture();
    expect(await runCli([], t.io)).toBe(2);
    expect(t.out()).toContain('usage: crawl <command>');
  });

  it('refuses unknown commands, including names an object inherits', async () => {
    for (const name of ['nope', 'constructor', '__proto__', 'toString']) {
      const t = capture();
      expect(await runCli([name], t.io)).toBe(2);
      expect(t.err()).toContain(`unknown command '${name}'`);
    }
    expect(heavyLoads).toEqual([]);
  });
});
