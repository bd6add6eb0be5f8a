/**
 * A misbehaving-network proxy (review s53c): sits between S3Store (wire or SDK) and radosgw.
 * Actions per request (decided by a plan):
 *  - pass
 *  - hang: never forwards, never answers (the connection stays open)
 *  - hang-after: forwards (the request lands), never answers
 *  - lose-answer: forwards, then destroys the client connection
 *  - delay-answer: forwards, waits delayMs, then answers
 *  - reset-mid-body: forwards, sends the headers and half the body, then destroys the connection
 *  - error: answers status (500/503) with code (InternalError/ServiceUnavailable/SlowDown) without forwarding
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Action =
  | 'pass'
  | 'hang'
  | 'hang-after'
  | 'lose-answer'
  | 'delay-answer'
  | 'reset-mid-body'
  | 'error'
  /** Holds the request until releaseHeld(), then forwards it even when its client has gone (a stalled server). */
  | 'hold';

export interface Fault {
  action?: Action;
  status?: number;
  code?: string;
  delayMs?: number;
}

export interface Req {
  n: number;
  method: string;
  path: string;
}

export type Plan = (req: Req) => Fault | undefined;

export interface Entry extends Req {
  action: Action;
  upstreamStatus?: number;
}

export interface NetProxy {
  url: string;
  log: Entry[];
  setPlan(plan: Plan | undefined): void;
  /** Open client connections right now. */
  connections(): number;
  /** Requests whose handling has not finished (hung ones included). */
  pending(): number;
  /** Forwards every held request, in arrival order, one after another. */
  releaseHeld(): Promise<void>;
  /** Releases every hung request (destroys their connections). */
  releaseHung(): void;
  close(): Promise<void>;
}

export async function startNetProxy(upstream: string, plan?: Plan): Promise<NetProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true });
  let current = plan;
  let n = 0;
  let busy = 0;
  const log: Entry[] = [];
  const sockets = new Set<Socket>();
  const hung = new Set<Socket>();
  const held: (() => Promise<void>)[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const info: Req = { n: ++n, method: req.method ?? 'GET', path: req.url ?? '/' };
    const fault = current?.(info) ?? {};
    const action = fault.action ?? 'pass';
    const entry: Entry = { ...info, action };
    log.push(entry);
    if (action === 'hang') {
      hung.add(req.socket);
      await new Promise<void>((r) => req.socket.once('close', () => r()));
      return;
    }
    if (action === 'hold') {
      await new Promise<void>((release) =>
        held.push(async () => {
          try {
            const answer = await forward(target, agent, req, body);
            entry.upstreamStatus = answer.status;
            if (!req.socket.destroyed) {
              res.writeHead(answer.status, answer.headers);
              res.end(answer.body);
            }
          } finally {
            release();
          }
        }),
      );
      return;
    }
    if (action === 'error') {
      const status = fault.status ?? 503;
      const code = fault.code ?? (status === 500 ? 'InternalError' : 'ServiceUnavailable');
      const xml =
        '<?xml version="1.0" encoding="UTF-8"?>' +
        `<Error><Code>${code}</Code><Message>injected</Message></Error>`;
      res.writeHead(status, {
        'content-type': 'application/xml',
        'content-length': Buffer.byteLength(xml),
      });
      res.end(xml);
      return;
    }
    const answer = await forward(target, agent, req, body);
    entry.upstreamStatus = answer.status;
    if (action === 'hang-after') {
      hung.add(req.socket);
      await new Promise<void>((r) => req.socket.once('close', () => r()));
      return;
    }
    if (action === 'lose-answer') {
      req.socket.destroy();
      return;
    }
    if (action === 'delay-answer') await sleep(fault.delayMs ?? 1000);
    if (req.socket.destroyed) return;
    if (action === 'reset-mid-body') {
      res.writeHead(answer.status, answer.headers);
      res.write(answer.body.subarray(0, Math.floor(answer.body.length / 2)));
      await sleep(20);
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  };

  const server = createServer((req, res) => {
    busy++;
    handle(req, res)
      .catch(() => {
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(502);
          res.end();
        } else req.socket.destroy();
      })
      .finally(() => busy--);
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      hung.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    setPlan(next) {
      current = next;
    },
    connections: () => sockets.size,
    pending: () => busy,
    async releaseHeld() {
      while (held.length) await held.shift()!();
    },
    releaseHung() {
      for (const s of hung) s.destroy();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

/** The fault for the first `times` requests matching `match`. */
export function once(match: (r: Req) => boolean, fault: Fault, times = 1): Plan {
  let left = times;
  return (r) => {
    if (left > 0 && match(r)) {
      left--;
      return fault;
    }
    return undefined;
  };
}

const HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
]);

function forward(
  target: URL,
  agent: Agent,
  req: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined && !HOP.has(k)) headers[k] = v;
  delete headers.expect;
  headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const up = httpRequest(
      {
        agent,
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const h: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined && !HOP.has(k)) h[k] = v;
          const b = Buffer.concat(chunks);
          if (req.method !== 'HEAD') h['content-length'] = String(b.length);
          resolve({ status: res.statusCode ?? 502, headers: h, body: b });
        });
      },
    );
    up.on('error', reject);
    up.end(body);
  });
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
