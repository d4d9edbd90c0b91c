/**
 * A stand-in for a managed Redis endpoint (a DNS name or a cloud provider's primary endpoint) in fault tests: a TCP
 * relay on a free loopback port that sends each NEW connection to the current target. `retarget` is the endpoint
 * moving to the promoted node after a failover: connections already open stay on the old node, as they do when a DNS
 * record changes under them.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpEndpoint {
  readonly port: number;
  /** Send new connections to `port` from now on (open ones keep their node). */
  retarget(port: number): void;
  /** Stop listening and cut every relayed connection. Idempotent. */
  close(): Promise<void>;
}

export async function startTcpEndpoint(targetPort: number, host = '127.0.0.1'): Promise<TcpEndpoint> {
  let target = targetPort;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  let closed = false;
  return {
    port,
    retarget(p) {
      target = p;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        closed = true;
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
