import { getRequestListener, RequestError } from '@hono/node-server';
import { createServer, type Server } from 'node:http';
import { typeFor } from './problem.js';
import '../model/bytes-node.js';

/**
 * The Node HTTP server of an app's `fetch` (functions/node.ts, and the tests' servers). A request Node
 * parses but that names no URL (a malformed Host header or request target) never reaches the app: it is
 * answered here, 400 problem+json like every other error (@hono/node-server's own answer is an empty
 * text/plain 400).
 */
export function createNodeServer(
  fetch: (request: Request) => Response | Promise<Response>,
  hostname?: string,
): Server {
  const listener = getRequestListener(fetch, {
    ...(hostname !== undefined ? { hostname } : {}),
    errorHandler: (err) => problem(err instanceof RequestError),
  });
  return createServer(listener);
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
