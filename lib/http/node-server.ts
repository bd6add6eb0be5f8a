import { getRequestListener, RequestError } from '@hono/node-server';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { typeFor } from './problem.js';
import '../model/bytes-node.js';

/**
 * The Node HTTP server of an app's `fetch` (functions/node.ts, and the tests' servers). A request Node
 * parses but that names no URL (a malformed Host header or request target) never reaches the app: it is
 * answered here, 400 problem+json like every other error (@hono/node-server's own answer is an empty
 * text/plain 400), and so is an HTTP/1.1 request without Host or with an Expect it cannot meet (417).
 */
export function createNodeServer(
  fetch: (request: Request) => Response | Promise<Response>,
  hostname?: string,
): Server {
  const listener = getRequestListener(fetch, {
    ...(hostname !== undefined ? { hostname } : {}),
    errorHandler: (err) => problem(err instanceof RequestError),
  });
  // Host names are case-insensitive: @hono/node-server compares the URL's (lower-cased) hostname with the
  // Host as sent, and answered 400 to `Host: LOCALHOST:8787` (curl keeps the case the user typed).
  // An HTTP/1.1 request without Host, and an Expect other than 100-continue, are answered here too: Node's
  // own answers (an empty 400 and 417) are no problem+json.
  return createServer({ requireHostHeader: false }, (req, res) => {
    const host = req.headers.host;
    if (host) req.headers.host = host.toLowerCase();
    else if (req.httpVersion === '1.1') return send(res, 400, 'the request has no Host header');
    return listener(req, res);
  })
    .on('checkExpectation', (_req, res) => send(res, 417, 'only Expect: 100-continue is supported'))
    .on('clientError', answerUnparsed);
}

/** A problem+json answer written to Node's response (requests that never reach the app). */
function send(res: ServerResponse, status: 400 | 417, detail: string): void {
  const title = status === 400 ? 'Bad Request' : 'Expectation Failed';
  const body = JSON.stringify({ type: typeFor(status), title, status, detail });
  res.writeHead(status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(body);
}

/**
 * A request Node's HTTP parser refuses (headers over its 16 KiB, a malformed header line) never reaches
 * the app either: answered here as problem+json, where Node's own answer is a bare status line.
 */
function answerUnparsed(err: NodeJS.ErrnoException, socket: Socket): void {
  // As Node's own handler: not while a response on this connection has sent its headers (an earlier,
  // finished response on a kept-alive connection does not count).
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
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
