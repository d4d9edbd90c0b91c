import { createHmac, timingSafeEqual } from 'node:crypto';

/** The signature header webhooks carry: `t=<unix seconds>,v1=<hex hmac-sha256(secret, t + "." + body)>`. */
export const SIGNATURE_HEADER = 'x-crawler-signature';
/** The event's id, the same on every re-delivery: receivers drop ids they have already accepted. */
export const EVENT_ID_HEADER = 'x-crawler-event-id';

/** `t=…,v1=…` for `body` sent at `unixSeconds`. */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** Options for {@link verifyWebhook}. */
export interface VerifyOptions {
  /** Reject signatures older (or newer) than this, against replays. @defaultValue 300 */
  toleranceSeconds?: number;
  /** @defaultValue Date.now() / 1000 */
  nowSeconds?: number;
}

/** Whether `header` is a valid signature of `body` (raw, as received) under `secret`, within the tolerance. */
export function verifyWebhook(secret: string, body: string | Buffer, header: string | undefined, options: VerifyOptions = {}): boolean {
  if (!header) return false;
  const parts = new Map<string, string[]>();
  for (const item of header.split(',')) {
    const at = item.indexOf('=');
    if (at <= 0) continue;
    const key = item.slice(0, at).trim();
    parts.set(key, [...(parts.get(key) ?? []), item.slice(at + 1).trim()]);
  }
  const t = Number(parts.get('t')?.[0]);
  if (!Number.isInteger(t)) return false;
  const now = options.nowSeconds ?? Date.now() / 1000;
  if (Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return false;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  // Several v1 values are allowed (a sender rotating its secret signs with both).
  return (parts.get('v1') ?? []).some((hex) => {
    const given = Buffer.from(hex, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
