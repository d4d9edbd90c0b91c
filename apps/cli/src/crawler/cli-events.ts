import type { Logger } from '@crawler/core';
import { startEventDispatcher } from '@crawler/events';
import type { CrawlerConfig, CrawlerRuntime } from '@crawler/pipeline';

/** The link events a CLI process delivers while it routes, as the router app does. */
export interface CliEvents {
  /** Deliver what is due now (the last pages' events), then stop. Never throws. */
  finish(): Promise<void>;
  /** Stop after the current round (on a signal). Never throws. */
  stop(): Promise<void>;
}

/**
 * Start the outbox dispatcher (webhook, Redis stream) in a process that routes, unless EVENTS_DISPATCHER=false or
 * there is nowhere to deliver. Without it, a user who runs the crawler from the CLI would never get an event.
 */
export function startCliEvents(runtime: CrawlerRuntime, config: CrawlerConfig, logger: Logger, router = true): CliEvents {
  const dispatcher = router && config.events.dispatcherEnabled ? startEventDispatcher({ prisma: runtime.prisma, redis: runtime.redis, settings: config.events, logger }) : null;
  const warn = (what: string) => (err: unknown) => logger.warn({ err }, what);
  return {
    finish: async () => {
      await dispatcher?.drain().catch(warn('delivering the last link events failed'));
    },
    stop: async () => {
      await dispatcher?.stop().catch(warn('stopping the event dispatcher failed'));
    },
  };
}
