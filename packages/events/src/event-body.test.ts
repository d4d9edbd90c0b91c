import { describe, expect, it } from 'vitest';
import type { LinkEvent } from '@crawler/db';
import { eventBody } from './dispatcher.js';

const base: LinkEvent = {
  id: '00000000-0000-4000-8000-000000000001', type: 'link.done', linkId: '00000000-0000-4000-8000-000000000002', url: 'https://a.example/',
  status: 'done', fetcher: 'simple_http', errorType: null, occurredAt: '2026-06-01T00:00:00.000Z', seq: '7',
};

describe('eventBody', () => {
  it('keeps link.done / link.failed payloads as they were', () => {
    expect(Object.keys(JSON.parse(eventBody(base)))).toEqual(['id', 'type', 'linkId', 'url', 'status', 'fetcher', 'errorType', 'occurredAt', 'seq']);
  });

  it('says why a link failed, in words, on link.failed only', () => {
    const failed = JSON.parse(eventBody({ ...base, type: 'link.failed', status: 'failed', errorType: 'network_error', error: 'max_attempts:network_error: UND_ERR_SOCKET: other side closed' }));
    expect(Object.keys(failed)).toEqual(['id', 'type', 'linkId', 'url', 'status', 'fetcher', 'errorType', 'error', 'occurredAt', 'seq']);
    expect(failed.error).toBe('max_attempts:network_error: UND_ERR_SOCKET: other side closed');
    expect(JSON.parse(eventBody({ ...base, type: 'link.failed', status: 'failed', errorType: 'internal_error' })).error).toBeNull();
  });

  it('carries the old and new sha256 and the version on change events', () => {
    const changed = JSON.parse(eventBody({ ...base, type: 'link.changed', oldSha256: 'a'.repeat(64), newSha256: 'b'.repeat(64), version: 3 }));
    expect(changed).toMatchObject({ type: 'link.changed', oldSha256: 'a'.repeat(64), newSha256: 'b'.repeat(64), version: 3 });
    const unchanged = JSON.parse(eventBody({ ...base, type: 'link.unchanged', oldSha256: 'a'.repeat(64), newSha256: 'a'.repeat(64), version: 1 }));
    expect(unchanged.oldSha256).toBe(unchanged.newSha256);
  });
});
