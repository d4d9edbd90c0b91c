/**
 * `crawl demo`'s checks that need no crawl. The demo itself (two crawls on real Redis, Postgres and Chromium; the
 * second routes by learned decisions and probes less) runs once in the tests, as a user runs it: bundle.int.test.ts.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import demo from './demo.js';

describe('crawl demo', () => {
  it('rejects a bad environment value, naming the variable', async () => {
    const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env: { DEMO_DATABASE: 'Robert"); DROP TABLE' } };
    await expect(demo.run([], io)).rejects.toThrow(/DEMO_DATABASE=/);
  });
});
