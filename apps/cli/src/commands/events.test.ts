import { describe, expect, it } from 'vitest';
import { loadConfig } from '@crawler/pipeline';
import { eventStatsReport } from './events.js';

const DB = { DATABASE_URL: 'postgresql://postgres@127.0.0.1/x' };
const counts = { pending: 7, delivered: 0, dead: 0, unstreamed: 7 };

describe('crawl events stats', () => {
  it('reports nothing pending when no channel is configured, and says why', () => {
    const r = eventStatsReport(counts, loadConfig({ ...DB, EVENTS_STREAM: 'off' }).events);
    expect(r).toEqual({ webhook: null, stream: null, note: expect.stringMatching(/no channel is configured/) });
    expect(JSON.stringify(r)).not.toContain('pending');
  });

  it('counts each configured channel on its own', () => {
    expect(eventStatsReport(counts, loadConfig({ ...DB, QUEUE_PREFIX: '{f}' }).events)).toEqual({ webhook: null, stream: { key: '{f}:events', unstreamed: 7 } });
    const both = loadConfig({ ...DB, WEBHOOK_URL: 'https://hooks.example/in', WEBHOOK_SECRET: '0123456789abcdef0123', EVENTS_STREAM: 'off' }).events;
    expect(eventStatsReport(counts, both)).toEqual({ webhook: { pending: 7, delivered: 0, dead: 0 }, stream: null });
  });
});
