import { getRequestListener, RequestError } from '@hono/node-server';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../model/log.js';
import { typeFor } from './problem.js';
import '../model/bytes-node.js';

/** Logs one request the server answered itself, as the access log would (no route: `-`). */
type Answered = (status: number, started: number, method?: string) => void;

/**
 * The Node HTTP server of an app's `fetch` (functions/node.ts, and the tests' servers). A request Node
 * parses but that names no URL (a malformed Host header or request target) never reaches the app: it is
 * answered here, 400 problem+json like every other error (@hono/node-server's own answer is an empty
 * text/plain 400), and so is an HTTP/1.1 request without Host or with an Expect it cannot meet (417).
 * Each such answer gets its `request` line in `log` (route `-`), as the app's access log gives the rest.
 */
export function createNodeServer(
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
  hostname?: string,
  log?: Logger,
): Server {
  const answered: Answered = (status, started, method) =>
    log?.info('request', { method, route: '-', status, ms: msSince(started) });
  // The requests that reached the app: its access log has their line.
  const reached = new WeakSet<object>();
  const listener = getRequestListener(
    (request, env) => {
      reached.add(env.incoming);
      return fetch(request, env);
    },
    {
      ...(hostname !== undefined ? { hostname } : {}),
      errorHandler: (err) => problem(err instanceof RequestError),
    },
  );
  // Host names are case-insensitive: @hono/node-server compares the URL's (lower-cased) hostname with the
  // Host as sent, and answered 400 to `Host: LOCALHOST:8787` (curl keeps the case the user typed).
  // An HTTP/1.1 request without Host, and an Expect other than 100-continue, are answered here too: Node's
  // own answers (an empty 400 and 417) are no problem+json.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    const started = performance.now();
    const host = req.headers.host;
    if (host) req.headers.host = host.toLowerCase();
    else if (req.httpVersion === '1.1')
      return send(req, res, 400, 'the request has no Host header', answered, started);
    void listener(req, res).then(() => {
      if (!reached.has(req)) answered(res.statusCode, started, req.method);
    });
  })
    .on('checkExpectation', (req, res) =>
      send(req, res, 417, 'only Expect: 100-continue is supported', answered, performance.now()),
    )
    .on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      const status = answerUnparsed(err, socket);
      if (status) answered(status, performance.now());
    });
  // A client that closes its sending side after the whole request (`nc -N`, some proxies) still reads:
  // Node's default ended the socket at its FIN and the answer went nowhere, although a write had landed.
  // With this, the socket closes after the last answer (Node marks it the last one). The property is
  // Node's own (lib/_http_server.js, false by default), not in its types; test/http/half-close.test.ts
  // fails if it stops working.
  (server as typeof server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  return server;
}

function msSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

/** A problem+json answer written to Node's response (requests that never reach the app). */
function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: 400 | 417,
  detail: string,
  answered: Answered,
  started: number,
): void {
  const title = status === 400 ? 'Bad Request' : 'Expectation Failed';
  const body = JSON.stringify({ type: typeFor(status), title, status, detail });
  res.writeHead(status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(body);
  answered(status, started, req.method);
}

/**
 * A request Node's HTTP parser refuses (headers over its 16 KiB, a malformed header line) never reaches
 * the app either: answered here as problem+json, where Node's own answer is a bare status line. Returns
 * the status sent, if any.
 */
function answerUnparsed(err: NodeJS.ErrnoException, socket: Socket): number | undefined {
  // As Node's own handler: not while a response on this connection has sent its headers (an earlier,
  // finished response on a kept-alive connection does not count).
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return undefined;
  }
  const [status, title, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'the request line and headers are over 16 KiB']
      : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
        ? [413, 'Content Too Large', 'the chunk extensions are over 16 KiB']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'the request was not received in time']
          : [400, 'Bad Request', 'the request is not valid HTTP/1.1'];
  const body = JSON.stringify({ type: typeFor(status), title, status, detail });
  // Then closed, as Node does (the server allows half-open sockets: `end` alone would keep it).
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\ncontent-type: application/problem+json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
  return status;
}

function problem(malformed: boolean): Response {
  const [status, title, detail] = malformed
    ? [400, 'Bad Request', 'the request target or Host header is malformed']
    : [500, 'Internal Server Error', 'the server could not answer this request'];
  return new Response(JSON.stringify({ type: typeFor(status), title, status, detail }), {
    status,
    headers: { 'content-type': 'application/problem+json' },
  });
}
