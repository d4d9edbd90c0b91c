import { mkdtempSync, readFileSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSimWebArgs, startSimWebCli, WALLS } from './cli.js';
import type { SimWeb } from './sim-web.js';

let web: SimWeb | null = null;
afterEach(async () => {
  await web?.close();
  web = null;
});

describe('sim-web (the bin)', () => {
  it('starts the sites asked for, prints where each is, and they answer as their kind and wall', async () => {
    const out: string[] = [];
    web = await startSimWebCli(parseSimWebArgs(['--sites', 'static,spa', '--walls', 'cloudflare,anubis,wordfence', '--first-host', '127.0.9.2']), (line) => out.push(line));
    expect(web.sites.map((s) => s.name)).toEqual(['static-0', 'spa-1', 'wall-cloudflare', 'wall-anubis', 'wall-wordfence']);
    const text = out.join('\n');
    for (const s of web.sites) expect(text).toContain(`${s.origin}/page/1`);
    const status = async (i: number) => (await fetch(`${web!.sites[i]!.origin}/page/1`)).status;
    expect(await status(0)).toBe(200);
    // Cloudflare's "Just a moment…" refuses a client that runs no script; Anubis answers its proof of work with 200;
    // Wordfence blocks.
    expect(await status(2)).toBe(403);
    expect(await (await fetch(`${web.sites[3]!.origin}/page/1`)).text()).toMatch(/anubis/i);
    expect(await status(4)).toBe(403);
  });

  it('binds every site to the same --port, each on its own loopback address', async () => {
    const probe = await startSimWebCli(parseSimWebArgs(['--sites', 'static', '--first-host', '127.0.9.40']), () => {});
    const port = Number(new URL(probe.sites[0]!.origin).port);
    await probe.close();
    web = await startSimWebCli(parseSimWebArgs(['--port', String(port), '--sites', 'static,files', '--first-host', '127.0.9.40']), () => {});
    expect(web.sites.map((s) => s.origin)).toEqual([`http://127.0.9.40:${port}`, `http://127.0.9.41:${port}`]);
    expect((await fetch(`${web.sites[1]!.origin}/files/doc-1.pdf`)).headers.get('content-type')).toBe('application/pdf');
  });

  it('serves over HTTPS with --https, writing the CA where --ca-file says', async () => {
    const caFile = join(mkdtempSync(join(tmpdir(), 'sim-web-cli-')), 'ca.pem');
    const out: string[] = [];
    web = await startSimWebCli(parseSimWebArgs(['--sites', 'static', '--https', '--ca-file', caFile, '--first-host', '127.0.9.60']), (line) => out.push(line));
    expect(web.sites[0]!.origin).toMatch(/^https:\/\/127\.0\.9\.60:\d+$/);
    expect(readFileSync(caFile, 'utf8')).toBe(web.ca!.cert);
    expect(out.join('\n')).toContain(`NODE_EXTRA_CA_CERTS=${caFile}`);
    const status = await new Promise<number>((resolve, reject) => get(web!.sites[0]!.urls(1, 1)[0]!, { ca: readFileSync(caFile) }, (res) => resolve(res.statusCode!)).on('error', reject));
    expect(status).toBe(200);
    expect(() => parseSimWebArgs(['--ca-file', caFile])).toThrow(/--ca-file goes with --https/);
  });

  it('names what it does not know, with what it does', () => {
    expect(() => parseSimWebArgs(['--walls', 'cloudfare'])).toThrow(/unknown wall 'cloudfare'.*cloudflare/);
    expect(() => parseSimWebArgs(['--sites', 'blog'])).toThrow(/unknown site kind 'blog'.*static/);
    expect(() => parseSimWebArgs(['--port', 'x'])).toThrow(/--port/);
    expect(WALLS).toContain('cloudflare');
  });
});
