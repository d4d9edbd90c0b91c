/**
 * The shared Redis the integration tests use (each test file takes its own key prefix, and each its own database
 * through @crawler/db/testing's createTestDatabase). One definition instead of a copy per test file.
 */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Poll `check` every 100 ms until it returns something truthy, and return that; throws `timed out waiting for
 * <what>` after `timeoutMs`. For integration tests that wait on other processes or queues (never a timing assertion).
 */
export async function waitFor<T>(check: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
