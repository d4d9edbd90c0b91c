/** The CLI entry point in a child process: what a shell pipeline does to it. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

describe('crawl | head', () => {
  it('ends quietly when the reader of its output goes away (EPIPE), without a stack trace', async () => {
    // classify writes only after stdin ends, so the pipe's read end is surely closed by the time it writes.
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'classify', '--status', '200'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.stdout.destroy();
    child.stdin.end(`<html><body>${'<p>Some text of the page.</p>'.repeat(2_000)}</body></html>`);
    expect([await closed, stderr]).toEqual([0, '']);
  }, 60_000);
});
