import { describe, expect, it } from 'vitest';
import { captureIO as capture } from './__fixtures__/capture-io.js';
import { COMMANDS } from './commands/index.js';
import { runCli } from './cli.js';
import { optionsOfUsage, suggestOption } from './option-suggestion.js';

/** `--follow` → `--folllow`: the letter in the middle of the name typed twice. */
function typoOf(option: string): string {
  const name = option.slice(2);
  const at = Math.floor(name.length / 2);
  return `--${name.slice(0, at + 1)}${name.slice(at)}`;
}

describe('a mistyped option', () => {
  it('gets "did you mean" with the command\'s closest option (crawl crawl --folow)', async () => {
    const t = capture();
    expect(await runCli(['crawl', 'https://example.com/', '--folow'], t.io)).toBe(2);
    expect(t.err()).toContain("crawl crawl: unknown option '--folow': did you mean --follow?\n");
    expect(t.err()).toContain('usage: crawl crawl');
  });

  it('works the same for another command (crawl run --until-idel)', async () => {
    const t = capture();
    expect(await runCli(['run', '--until-idel'], t.io)).toBe(2);
    expect(t.err()).toContain("did you mean --until-idle?");
  });

  it('keeps Node\'s message when no option is close', async () => {
    const t = capture();
    expect(await runCli(['run', '--zzzzzzzz'], t.io)).toBe(2);
    expect(t.err()).toContain("Unknown option '--zzzzzzzz'");
    expect(t.err()).not.toContain('did you mean');
  });

  it('keeps what the command put after Node\'s sentence (crawl classify --jsno)', async () => {
    const t = capture();
    expect(await runCli(['classify', '--jsno'], t.io)).toBe(2);
    expect(t.err()).toContain("crawl classify: unknown option '--jsno': did you mean --json? (usage: crawl classify");
  });

  it.each(Object.keys(COMMANDS))('%s: every option of its usage is suggested for a one-letter typo of it', async (name) => {
    const usage = (await COMMANDS[name]!.load()).usage;
    const options = optionsOfUsage(usage);
    // Every command but migrate (no options) lists some.
    if (!['migrate'].includes(name)) expect(options.length).toBeGreaterThan(0);
    for (const option of options) {
      const typo = typoOf(option);
            expect(suggestOption(typo, options), `${name} ${typo}`).toBe(option);
    }
  }, 30_000);

  it('suggests nothing for a short or far-off name, and the only close one otherwise', () => {
    expect(suggestOption('--x', ['--json'])).toBeNull();
    expect(suggestOption('--verbose', ['--json', '--limit'])).toBeNull();
    expect(suggestOption('--jsno', ['--json', '--limit'])).toBe('--json');
    expect(suggestOption('--max-page', ['--max-pages', '--max-pages-per-host', '--max-depth'])).toBe('--max-pages');
  });
});
