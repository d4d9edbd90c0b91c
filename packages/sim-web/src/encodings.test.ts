import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDefaultRegistry, FetchError } from '@crawler/fetchers';
import type { TestServer } from '@crawler/testkit';
import { startEncodingSite, type EncodingCase } from './encodings.js';

const registry = createDefaultRegistry({ allowPrivateNetworks: true });
let site: TestServer & { cases: EncodingCase[] };

beforeAll(async () => {
  site = await startEncodingSite({ host: '127.0.0.1' });
});

afterAll(async () => {
  await registry.closeAll();
  await site?.close();
});

describe('the encodings site\'s content codings, as plain HTTP reads them', () => {
  it('gives each coded page\'s title, text and links once decoded, or the error it deserves', async () => {
    const coded = site.cases.filter((c) => c.headers['content-encoding'] !== undefined);
    const got = await Promise.all(
      coded.map(async (c) => {
        try {
          const text = (await registry.get('simple_http').fetch({ url: site.url(c.path) })).text ?? '';
          return [c.path, c.expect.title !== null && text.includes(`<title>${c.expect.title}</title>`), c.expect.text !== null && text.includes(c.expect.text), c.expect.links.every((l) => text.includes(`href="${l}"`))];
        } catch (err) {
          return [c.path, err instanceof FetchError ? err.code : String(err)];
        }
      }),
    );
    // The zstd pages come from the reference encoder (zstd-pages.ts): a change to the pages needs them written again.
    expect(got).toEqual(coded.map((c) => (c.expect.fails ? [c.path, c.expect.fails] : [c.path, c.expect.title !== null, c.expect.text !== null, true])));
    expect(coded.map((c) => c.path)).toEqual(expect.arrayContaining(['/enc/zstd', '/enc/zstd-streamed', '/enc/gzip-zstd', '/enc/truncated-zstd', '/enc/fake-zstd']));
  });
});
