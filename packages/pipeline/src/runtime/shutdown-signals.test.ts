import { describe, expect, it } from 'vitest';
import { onShutdownSignal } from './shutdown-signals.js';

describe('onShutdownSignal', () => {
  it('runs the handler on the first SIGTERM or SIGINT, onRepeat after, and nothing once released', () => {
    const seen: string[] = [];
    const release = onShutdownSignal((s) => seen.push(`first:${s}`), (s) => seen.push(`again:${s}`));
    // process.emit calls the listeners without delivering a real signal to the test runner.
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGTERM', 'SIGTERM');
    release();
    const before = process.listenerCount('SIGTERM');
    expect(seen).toEqual(['first:SIGINT', 'again:SIGTERM']);
    expect(before).toBe(process.listenerCount('SIGTERM'));
    const other = onShutdownSignal(() => seen.push('other'));
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    other();
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
