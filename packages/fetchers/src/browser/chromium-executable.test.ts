import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chromiumExecutableProblem } from './chromium-executable.js';

describe('chromiumExecutableProblem', () => {
  it('says what is wrong with a path that cannot be launched, and nothing about an executable file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chromium-path-'));
    const plain = join(dir, 'chromium.txt');
    writeFileSync(plain, 'not a program');
    chmodSync(plain, 0o644);
    const program = join(dir, 'chromium');
    writeFileSync(program, '#!/bin/sh\n');
    chmodSync(program, 0o755);
    expect(chromiumExecutableProblem(join(dir, 'missing'))).toBe('no such file');
    expect(chromiumExecutableProblem(join(plain, 'below-a-file'))).toBe('no such file');
    expect(chromiumExecutableProblem(dir)).toBe('is a directory, not the Chromium executable');
    // root may read anything but still needs an execute bit to run a file.
    expect(chromiumExecutableProblem(plain)).toBe('is not executable by this user');
    expect(chromiumExecutableProblem(program)).toBeNull();
  });
});
