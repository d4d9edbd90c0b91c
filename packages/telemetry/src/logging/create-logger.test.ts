import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CrawlerError } from '@crawler/core';
import { createLogger, jobLogger } from './create-logger.js';

/** A destination that keeps every line written to it. */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines, json: () => lines.map((l) => JSON.parse(l) as Record<string, any>) };
}

describe('createLogger', () => {
  it('writes JSON when not on a terminal, with name and level filtering', () => {
    const out = capture();
    const log = createLogger({ name: 'router', level: 'warn', pretty: 'auto', destination: out.stream });
    log.info('dropped');
    log.warn({ domain: 'a.test' }, 'kept');
    const [line, ...rest] = out.json();
    expect(rest).toHaveLength(0);
    expect(line).toMatchObject({ name: 'router', msg: 'kept', domain: 'a.test', level: 40 });
  });

  it('redacts cookies, authorization and proxy credentials wherever requests and responses are logged', () => {
    const out = capture();
    const log = createLogger({ name: 't', destination: out.stream, pretty: false });
    log.info(
      {
        req: { url: 'http://a.test/', headers: { cookie: 'sid=secret1', authorization: 'Bearer secret2', accept: 'text/html' } },
        res: { status: 200, headers: { 'set-cookie': ['sid=secret3'], 'content-type': 'text/html' } },
        fetch: { request: { headers: { 'proxy-authorization': 'Basic secret4' } } },
        proxy: { proxyAuthorization: 'secret5' },
        headers: { authorization: 'secret6' },
      },
      'fetched',
    );
    const text = out.lines.join('\n');
    for (const secret of ['secret1', 'secret2', 'secret3', 'secret4', 'secret5', 'secret6']) expect(text).not.toContain(secret);
    const [line] = out.json();
    expect(line!.req.headers).toEqual({ cookie: '[redacted]', authorization: '[redacted]', accept: 'text/html' });
    expect(line!.res.headers['content-type']).toBe('text/html');
  });

  it('serializes errors under err with the crawler code and the cause chain', () => {
    const out = capture();
    const log = createLogger({ name: 't', destination: out.stream, pretty: false });
    const err = new CrawlerError('blocked_captcha', 'challenge page', { url: 'http://a.test/', cause: new Error('turnstile seen') });
    log.error({ err }, 'fetch failed');
    const [line] = out.json();
    expect(line!.err).toMatchObject({ type: 'CrawlerError', message: expect.stringContaining('challenge page'), code: 'blocked_captcha', url: 'http://a.test/' });
    expect(line!.err.cause).toMatchObject({ type: 'Error', message: 'turnstile seen' });
  });

  it('pretty-prints for humans when asked, still redacted', () => {
    const out = capture();
    const log = createLogger({ name: 'api', destination: out.stream, pretty: true });
    log.info({ req: { headers: { cookie: 'sid=secret' } } }, 'hello there');
    const text = out.lines.join('\n');
    expect(text).toContain('hello there');
    expect(text).not.toContain('sid=secret');
    expect(() => JSON.parse(out.lines[0]!)).toThrow();
  });
});

describe('jobLogger', () => {
  it('binds job id, queue, link id, url and fetcher to every line', () => {
    const out = capture();
    const base = createLogger({ name: 'fetcher', destination: out.stream, pretty: false });
    const log = jobLogger(base, { id: '42', queueName: 'fetch-simple_http', data: { linkId: 'lnk_1', url: 'http://a.test/x', fetcher: 'simple_http', other: { big: true } } }, { attempt: 2 });
    log.info('start');
    const [line] = out.json();
    expect(line).toMatchObject({ jobId: '42', queue: 'fetch-simple_http', linkId: 'lnk_1', url: 'http://a.test/x', fetcher: 'simple_http', attempt: 2, msg: 'start' });
    expect(line).not.toHaveProperty('other');
  });

  it('binds only what the job has', () => {
    const out = capture();
    const log = jobLogger(createLogger({ name: 'r', destination: out.stream, pretty: false }), { id: undefined, queueName: 'route', data: null });
    log.info('x');
    const [line] = out.json();
    expect(line).toMatchObject({ queue: 'route' });
    expect(line).not.toHaveProperty('jobId');
    expect(line).not.toHaveProperty('url');
  });
});
