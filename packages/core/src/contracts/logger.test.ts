import { describe, expect, it } from 'vitest';
import { lazyChild, type Logger } from './logger.js';

function recorder(minLevel: 'debug' | 'warn') {
  const children: Record<string, unknown>[] = [];
  const lines: unknown[][] = [];
  const order = ['debug', 'info', 'warn', 'error'];
  const make = (bindings: Record<string, unknown>): Logger & { isLevelEnabled(level: string): boolean } => ({
    isLevelEnabled: (level) => order.indexOf(level) >= order.indexOf(minLevel),
    debug: (...a: unknown[]) => void lines.push(['debug', bindings, ...a]),
    info: (...a: unknown[]) => void lines.push(['info', bindings, ...a]),
    warn: (...a: unknown[]) => void lines.push(['warn', bindings, ...a]),
    error: (...a: unknown[]) => void lines.push(['error', bindings, ...a]),
    child: (b) => {
      children.push(b);
      return make({ ...bindings, ...b });
    },
  });
  return { root: make({}), children, lines };
}

describe('lazyChild', () => {
  it('makes the child only for a line its parent writes, once, with the bindings', () => {
    const r = recorder('warn');
    const log = lazyChild(r.root, { jobId: 'j1', url: 'https://a.example/' });
    log.debug({ x: 1 }, 'not written');
    log.info('not written either');
    expect(r.children).toEqual([]);
    log.warn({ errorType: 'timeout' }, 'slow');
    log.error('failed');
    expect(r.children).toEqual([{ jobId: 'j1', url: 'https://a.example/' }]);
    expect(r.lines).toEqual([
      ['warn', { jobId: 'j1', url: 'https://a.example/' }, { errorType: 'timeout' }, 'slow'],
      ['error', { jobId: 'j1', url: 'https://a.example/' }, 'failed'],
    ]);
    // A child of the lazy child carries both sets of bindings, and is lazy too.
    const more = log.child({ step: 'apply' });
    expect(r.children).toHaveLength(1);
    more.warn('late');
    expect(r.lines.at(-1)).toEqual(['warn', { jobId: 'j1', url: 'https://a.example/', step: 'apply' }, 'late']);
  });

  it('writes every level through a parent that cannot say which levels it writes', () => {
    const lines: string[] = [];
    const plain: Logger = { debug: (m: unknown) => void lines.push(`d ${String(m)}`), info: () => {}, warn: () => {}, error: () => {}, child: () => plain };
    lazyChild(plain, { a: 1 }).debug('kept');
    expect(lines).toEqual(['d kept']);
  });
});
