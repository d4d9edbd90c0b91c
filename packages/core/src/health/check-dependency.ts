/**
 * One dependency of a health check (Redis PING, Postgres SELECT 1): `ok` when it answers within `ms`, else `fail`.
 * The answer is meant for an unauthenticated endpoint, so it never carries the driver's words (they name hosts,
 * databases and users): those go to `log`.
 */
export async function checkDependency(name: string, probe: () => Promise<unknown>, ms: number, log: { warn(obj: object, msg: string): void }): Promise<'ok' | 'fail'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([probe(), timeout]);
    return 'ok';
  } catch (err) {
    log.warn({ err, dependency: name }, 'health check failed');
    return 'fail';
  } finally {
    clearTimeout(timer);
  }
}
