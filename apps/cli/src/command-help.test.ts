import { describe, expect, it } from 'vitest';
import { captureIO as capture } from './__fixtures__/capture-io.js';
import { COMMANDS } from './commands/index.js';
import { runCli, wantsHelp } from './cli.js';

describe('crawl <command> --help', () => {
  it.each(Object.keys(COMMANDS))('%s prints its summary and usage and exits 0', async (name) => {
    for (const flag of ['--help', '-h']) {
      const t = capture();
      expect(await runCli([name, flag], t.io)).toBe(0);
      expect(t.err()).toBe('');
      expect(t.out()).toContain(`crawl ${name}: ${COMMANDS[name]!.summary}\n`);
      expect(t.out()).toContain(`usage: crawl ${name}`);
    }
  }, 30_000);

  it('is help among the options, an argument after --', () => {
    expect(wantsHelp(['--json', '--help'])).toBe(true);
    expect(wantsHelp(['x', '-h'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
    expect(wantsHelp(['--helpful'])).toBe(false);
  });
});
