import { spawn, type ChildProcess } from 'node:child_process';

/** One JSON log line of a child (pino). */
export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

/** A built app running as a child process, its JSON logs collected. */
export interface AppProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logs: LogLine[];
  /** Non-JSON output (stderr, crashes), for failure messages. */
  readonly raw: string[];
  /** Resolve with the first log line matching, or reject after timeoutMs with the process's recent output. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Send a signal and resolve with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

/** Start `node <script>` with exactly `env` (plus PATH/HOME), collecting stdout JSON lines. */
export function spawnApp(name: string, script: string, env: Record<string, string>): AppProcess {
  const child = spawn(process.execPath, [script], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  const raw: string[] = [];
  const waiters = new Set<() => void>();
  const onLines = (isErr: boolean) => {
    let buf = '';
    return (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() === '') continue;
        try {
          if (isErr) throw new Error('stderr');
          logs.push(JSON.parse(line) as LogLine);
        } catch {
          raw.push(line);
        }
        for (const w of waiters) w();
      }
    };
  };
  child.stdout!.on('data', onLines(false));
  child.stderr!.on('data', onLines(true));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const tail = () => [...raw.slice(-10), ...logs.slice(-10).map((l) => JSON.stringify(l))].join('\n');

  return {
    name,
    child,
    logs,
    raw,
    exited,
    waitForLog(match, timeoutMs = 30_000) {
      return new Promise<LogLine>((resolve, reject) => {
        const check = () => {
          const hit = logs.find(match);
          if (hit) {
            cleanup();
            resolve(hit);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${name}: no matching log line within ${timeoutMs} ms; recent output:\n${tail()}`));
        }, timeoutMs);
        const onExit = () => {
          cleanup();
          reject(new Error(`${name} exited (code ${child.exitCode}) before the expected log line; recent output:\n${tail()}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('exit', onExit);
        };
        waiters.add(check);
        child.once('exit', onExit);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
