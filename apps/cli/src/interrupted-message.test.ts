import { afterEach, describe, expect, it } from 'vitest';
import { captureIO as capture } from './__fixtures__/capture-io.js';
import { COMMANDS } from './commands/index.js';
import { runCli } from './cli.js';

afterEach(() => {
  delete COMMANDS['stopped-test'];
});

describe('a crawl stopped by a signal', () => {
  it('says where the links not fetched yet are: queued, fetching only while another process serves their fetcher, and crawl run continues them', async () => {
    // The pipeline's CrawlerStoppedError, as main recognises it (by name).
    COMMANDS['stopped-test'] = {
      summary: 'test',
      load: async () => ({ usage: 'usage: crawl stopped-test', run: async () => { throw Object.assign(new Error('the crawler was shut down before its work was done'), { name: 'CrawlerStoppedError' }); } }),
    };
    const t = capture();
    expect(await runCli(['stopped-test'], t.io)).toBe(130);
    const line = t.err();
    expect(line).toContain('crawl stopped-test: interrupted: the pages in flight were finished and stored');
    // A link the router handed to a fetcher reads 'queued' once no process serves that fetcher.
    expect(line).toMatch(/read 'queued'; 'fetching' while another running process serves/);
    expect(line).toContain('crawl run');
    expect(line).not.toMatch(/stay queued/);
  });
});
