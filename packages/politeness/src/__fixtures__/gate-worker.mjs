// A worker process for the fleet tests: uses the BUILT package, as a deployed worker would.
// Config arrives as JSON in argv[2]; results go back over the IPC channel.
import { Redis } from 'ioredis';
import { RedisPolitenessGate } from '@crawler/politeness';

const config = JSON.parse(process.argv[2]);
const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
const gate = new RedisPolitenessGate({
  redis,
  prefix: config.prefix,
  defaults: { maxConcurrency: config.maxConcurrency, minDelayMs: config.minDelayMs },
  slotTtlMs: config.slotTtlMs ?? 60_000,
  heartbeatMs: config.heartbeatMs,
  concurrencyRetryMs: config.concurrencyRetryMs ?? 50,
});

if (config.mode === 'hold') {
  // Take a slot and never give it back: the parent SIGKILLs us.
  for (;;) {
    const decision = await gate.acquire(config.domain);
    if (decision.granted) break;
    await new Promise((r) => setTimeout(r, decision.retryInMs));
  }
  process.send({ held: true });
  setInterval(() => {}, 1 << 30);
} else {
  const grants = [];
  const denials = { paused: 0, concurrency: 0, delay: 0 };
  // Wait for the sibling to be ready too, so the two really contend.
  const go = new Promise((resolve) => process.once('message', resolve));
  process.send({ ready: true });
  await go;
  for (let i = 0; i < config.requests; i++) {
    for (;;) {
      const decision = await gate.acquire(config.domain);
      if (decision.granted) {
        grants.push(decision.permit.grantedAtMs);
        try {
          const res = await fetch(config.url);
          await res.arrayBuffer();
        } finally {
          await decision.permit.release();
        }
        break;
      }
      denials[decision.reason]++;
      await new Promise((r) => setTimeout(r, decision.retryInMs));
    }
  }
  process.send({ grants, denials }, () => {
    redis.quit().finally(() => process.exit(0));
  });
}
