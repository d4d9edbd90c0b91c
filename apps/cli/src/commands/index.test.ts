import { describe, expect, it } from 'vitest';
import { DEFAULT_RETENTION_DAYS } from '@crawler/db';
import { COMMANDS } from './index.js';

describe('the command registry', () => {
  it('loads a runnable command for every entry', async () => {
    for (const [name, entry] of Object.entries(COMMANDS)) {
      const command = await entry.load();
      expect(typeof command.run, name).toBe('function');
      expect(entry.summary.length, name).toBeGreaterThan(10);
    }
  });

  it('states the retention default prune really uses', () => {
    expect(COMMANDS.prune!.summary).toContain(`(default ${DEFAULT_RETENTION_DAYS})`);
  });
});
