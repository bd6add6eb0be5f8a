import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A node:http server on 127.0.0.1 that answers as `handle` says (or not at all: a silent server, a stalled
 * body), counting requests. `close` goes into `closers`, and ends open connections too.
 */
export async function misbehavingServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  closers: (() => Promise<void>)[],
): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const sockets = new Set<Socket>();
  const s = createServer((req, res) => {
    hits++;
    handle(req, res);
  });
  s.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        s.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, hits: () => hits };
}
