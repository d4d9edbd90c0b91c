import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook } from './signature.js';
import { nextDelivery, DEFAULT_RETRY_POLICY } from './backoff.js';

describe('webhook signatures', () => {
  const body = '{"id":"e1","type":"link.done"}';

  it('is t=<unix>,v1=<hex hmac-sha256(secret, t.body)>', () => {
    const sig = signWebhook('s3cret', body, 1_700_000_000.9);
    expect(sig).toBe(`t=1700000000,v1=${createHmac('sha256', 's3cret').update(`1700000000.${body}`).digest('hex')}`);
    expect(verifyWebhook('s3cret', body, sig, { nowSeconds: 1_700_000_010 })).toBe(true);
  });

  it('rejects another secret, a changed body, an old timestamp and garbage', () => {
    const sig = signWebhook('s3cret', body, 1_700_000_000);
    expect(verifyWebhook('other', body, sig, { nowSeconds: 1_700_000_000 })).toBe(false);
    expect(verifyWebhook('s3cret', `${body} `, sig, { nowSeconds: 1_700_000_000 })).toBe(false);
    expect(verifyWebhook('s3cret', body, sig, { nowSeconds: 1_700_000_000 + 301 })).toBe(false);
    expect(verifyWebhook('s3cret', body, sig.replace(/t=\d+/, 't=1700000001'), { nowSeconds: 1_700_000_000 })).toBe(false);
    expect(verifyWebhook('s3cret', body, undefined)).toBe(false);
    expect(verifyWebhook('s3cret', body, 'v1=abc,t=x')).toBe(false);
  });
});

describe('nextDelivery', () => {
  const since = new Date('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(since.getTime() + ms);
  const mid = () => 0.5;

  it('doubles from the base delay up to the cap', () => {
    const delays = [1, 2, 3, 10, 20].map((n) => {
      const r = nextDelivery(n, since, since, DEFAULT_RETRY_POLICY, mid);
      return 'dead' in r ? -1 : r.nextAttemptAt.getTime() - since.getTime();
    });
    expect(delays).toEqual([5_000, 10_000, 20_000, 2_560_000, 3_600_000]);
  });

  it('keeps retrying for the whole window, then dead-letters', () => {
    // Walk a receiver that never answers: tries until 24 h have passed, then the event is dead.
    let now = since;
    let tries = 0;
    for (;;) {
      const r = nextDelivery(++tries, since, now, DEFAULT_RETRY_POLICY, mid);
      if ('dead' in r) break;
      now = r.nextAttemptAt;
    }
    expect(now.getTime() - since.getTime()).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(tries).toBeGreaterThan(20);
    expect(tries).toBeLessThan(60);
    expect('dead' in nextDelivery(1, since, at(DEFAULT_RETRY_POLICY.retryWindowMs - 1), DEFAULT_RETRY_POLICY, mid)).toBe(false);
  });

  it('spreads retries by ±20%', () => {
    const lo = nextDelivery(1, since, since, DEFAULT_RETRY_POLICY, () => 0);
    const hi = nextDelivery(1, since, since, DEFAULT_RETRY_POLICY, () => 0.999999);
    expect('nextAttemptAt' in lo && lo.nextAttemptAt.getTime() - since.getTime()).toBe(4_000);
    expect('nextAttemptAt' in hi && hi.nextAttemptAt.getTime() - since.getTime()).toBe(6_000);
  });
});
