import type { Socket } from 'node:net';

/** The bytes a raw server sends for one request, and whether it then closes the connection. */
export interface RawAnswer {
  bytes: string | Uint8Array;
  /** Close the connection after the answer (else it stays open for the next request). @defaultValue true */
  end?: boolean;
}

/**
 * A connection handler (for `net.createServer` or `tls.createServer`) that answers each HTTP request with exactly the
 * bytes `answer` gives: for the responses no HTTP server library sends (bare LFs, a 304 with a body length, an
 * unasked 100 Continue). `answer` gets the request's head (latin1, without its blank line) and its path. Strings are
 * written as latin1, one octet per character.
 */
export function rawHttpHandler(answer: (head: string, path: string) => RawAnswer): (socket: Socket) => void {
  return (socket) => {
    socket.on('error', () => undefined);
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        const { bytes, end: close = true } = answer(head, /^[A-Z]+ (\S+)/.exec(head)?.[1] ?? '');
        const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
        if (close) {
          socket.end(data);
          return;
        }
        socket.write(data);
      }
    });
  };
}
