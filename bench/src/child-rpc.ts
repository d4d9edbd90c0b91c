import { fork, type ChildProcess } from 'node:child_process';

interface RpcRequest {
  id: number;
  type: string;
  payload: unknown;
}
interface RpcResponse {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

/** A forked bench process answering typed calls over the IPC channel. */
export interface RpcChild {
  pid: number;
  /** False once the process has exited. */
  alive(): boolean;
  call<T>(type: string, payload?: unknown): Promise<T>;
  /** Ask the child to exit and wait for it; kills it if it does not go within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Fork `modulePath` (a built bench module that calls {@link serveRpc}). Crawls run in their own processes so that
 * one crawler's heap, sockets and event loop never slow the next, and the synthetic web never shares a loop with the
 * crawler it serves.
 */
export function forkRpcChild(modulePath: string, env: NodeJS.ProcessEnv = process.env, execArgv: string[] = []): RpcChild {
  const child: ChildProcess = fork(modulePath, [], { env, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (raw) => {
    const msg = raw as RpcResponse;
    const waiter = pending.get(msg.id);
    if (!waiter) return;
    pending.delete(msg.id);
    if (msg.ok) waiter.resolve(msg.value);
    else waiter.reject(new Error(msg.error ?? 'child call failed'));
  });
  child.once('exit', (code, signal) => {
    for (const w of pending.values()) w.reject(new Error(`bench child ${modulePath} exited (${code ?? signal})`));
    pending.clear();
  });
  return {
    pid: child.pid ?? -1,
    alive: () => child.exitCode === null && child.signalCode === null,
    call: <T>(type: string, payload?: unknown) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, type, payload } satisfies RpcRequest);
      }),
    stop: async (graceMs = 5_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ id: 0, type: '__exit', payload: null } satisfies RpcRequest);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Serve calls from the parent: each handler's value (or error message) is sent back; `__exit` ends the process. */
export function serveRpc(handlers: Record<string, (payload: any) => unknown>, onExit?: () => Promise<void>): void {
  process.on('message', async (raw) => {
    const msg = raw as RpcRequest;
    if (msg.type === '__exit') {
      await onExit?.().catch(() => undefined);
      process.disconnect?.();
      process.exit(0);
    }
    const handler = handlers[msg.type];
    try {
      if (!handler) throw new Error(`no handler for ${msg.type}`);
      const value = await handler(msg.payload);
      process.send?.({ id: msg.id, ok: true, value } satisfies RpcResponse);
    } catch (err) {
      process.send?.({ id: msg.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies RpcResponse);
    }
  });
}
