import type { Logger } from '@crawler/core';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * The one place a process listens for SIGTERM and SIGINT: `onSignal` runs on the first of them, `onRepeat` on any
 * later one (a second Ctrl-C while shutting down). Returns a function that removes the listeners again (a CLI
 * command that finished on its own must not keep them).
 */
export function onShutdownSignal(onSignal: (signal: NodeJS.Signals) => void, onRepeat: (signal: NodeJS.Signals) => void = () => {}): () => void {
  let seen = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (seen) return onRepeat(signal);
    seen = true;
    onSignal(signal);
  };
  for (const s of SIGNALS) process.on(s, handler);
  return () => {
    for (const s of SIGNALS) process.off(s, handler);
  };
}

/**
 * For a long-running process (a worker, the API): run `close` on the first SIGTERM or SIGINT, then exit; later
 * signals wait for the same shutdown. A shutdown that hangs past `forceExitMs` exits with code 1 rather than leaving
 * a zombie the orchestrator has to SIGKILL.
 */
export function exitOnSignals(close: () => Promise<void>, logger: Logger, forceExitMs: number): void {
  onShutdownSignal(
    (signal) => {
      logger.info({ signal }, 'signal received');
      setTimeout(() => {
        logger.error({ forceExitMs }, 'shutdown timed out; exiting');
        process.exit(1);
      }, forceExitMs).unref();
      close().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    },
    (signal) => logger.info({ signal }, 'shutdown already in progress'),
  );
}
