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
