/**
 * The logging surface packages accept. pino's Logger satisfies it; packages never create a logger
 * themselves (apps do, and hand down child loggers).
 */
export interface LogFn {
  (obj: object, msg?: string): void;
  (msg: string): void;
}

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything: the default where none is given. */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};

type Level = 'debug' | 'info' | 'warn' | 'error';

/**
 * `parent.child(bindings)`, made only when a line is written at a level the parent writes. A pino child serializes
 * (and redacts) its bindings when it is created; a job's child (job id, queue, link, URL) is created for every job,
 * yet at the default level most jobs write nothing (1–2% of a crawl process's CPU in the many-domains bench).
 */
export function lazyChild(parent: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  const writes = (parent as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.bind(parent);
  const line = (level: Level): LogFn =>
    ((objOrMsg: object | string, msg?: string) => {
      if (writes && !writes(level)) return;
      child ??= parent.child(bindings);
      if (typeof objOrMsg === 'string') child[level](objOrMsg);
      else child[level](objOrMsg, msg);
    }) as LogFn;
  return {
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    child: (more) => lazyChild(parent, { ...bindings, ...more }),
  };
}
