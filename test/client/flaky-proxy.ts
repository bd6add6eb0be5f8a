import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with one request. */
export type Action =
  | 'forward'
  /** Close the connection without an answer. */
  | 'drop'
  /** Forward it (so it takes effect), then close the connection instead of answering: a lost answer. */
  | 'forward-then-drop'
  | { status: number; headers?: Record<string, string>; body?: unknown };

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * An HTTP proxy in front of a Satchel server that misbehaves on cue: `script(n)` decides what happens to
 * the n-th request (0-based): answer it itself (503 with Retry-After, 400, …), drop the connection, or
 * forward it. Records every request it saw.
 */
export async function startFlakyProxy(
  target: string,
  script: (n: number, req: SeenRequest) => Action,
) {
  const seen: SeenRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const request: SeenRequest = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const action = script(seen.length, request);
      seen.push(request);
      if (action === 'drop') return void req.socket.destroy();
      if (typeof action === 'object') {
        const body = action.body === undefined ? '' : JSON.stringify(action.body);
        res.writeHead(action.status, {
          'content-type': 'application/problem+json',
          ...action.headers,
        });
        return void res.end(body);
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      const upstream = await fetch(target + req.url, {
        method: req.method!,
        headers,
        ...(request.body ? { body: request.body } : {}),
      });
      const text = await upstream.text();
      if (action === 'forward-then-drop') return void req.socket.destroy();
      const out: Record<string, string> = {};
      upstream.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'content-encoding')
          out[k] = v;
      });
      res.writeHead(upstream.status, out);
      res.end(text);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
