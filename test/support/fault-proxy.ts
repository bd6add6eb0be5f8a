/**
 * A fault-injecting HTTP proxy for tests: listens on a loopback port in front of an S3 server (the run's
 * radosgw) and, per request, passes it on or breaks it the ways networks and servers break:
 *
 * - `drop`: closes the client's connection before forwarding (the request never lands);
 * - `lose-answer`: forwards the request, lets the server answer, then closes the client's connection
 *   without the answer (the request landed, its response is lost);
 * - `error`: answers 500 or 503 itself with an S3 error body (not forwarded);
 * - `delayMs`: waits before forwarding (combines with any of the above);
 * - `hang`: neither forwards nor answers, the connection left open, until `releaseHung()` closes it;
 * - `hold`: holds the request until `releaseHeld()`, then forwards it even when its client has given up
 *   (a stalled server that works through its backlog later: review s53c);
 * - `pause()` / `resume()`: holds all traffic, like a server stopped with SIGSTOP: requests that arrive are
 *   held, answers on their way are held, and on resume the held requests are forwarded even when their
 *   client has given up meanwhile (a paused server works through its backlog when it continues).
 *
 * What happens to a request is decided by a plan: a function of the request (method, path, sequence
 * number), e.g. `randomFaults(seed, mix)` for a seeded random mix, or `onceFor(...)` for one fault on the
 * first matching request. Bodies are buffered whole, so the proxy suits small and medium objects.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mulberry32 } from './prng.js';

export type FaultAction = 'pass' | 'drop' | 'lose-answer' | 'error' | 'hang' | 'hold';

export interface Fault {
  action?: FaultAction;
  /** For `error`: the status the proxy answers with (default 503). */
  status?: 500 | 503;
  /** Wait this long before acting. */
  delayMs?: number;
}

export interface ProxiedRequest {
  /** 1-based sequence number of the request through this proxy. */
  n: number;
  method: string;
  /** Path and query, e.g. `/bucket/prefix/key?x-id=PutObject`. */
  path: string;
  headers: IncomingHttpHeaders;
}

export type FaultPlan = (req: ProxiedRequest) => Fault | undefined;

export interface ProxyLogEntry {
  n: number;
  method: string;
  path: string;
  action: FaultAction;
  delayMs: number;
  /** Status of the upstream answer, when the request was forwarded and answered. */
  upstreamStatus?: number;
  /** The client had gone before its answer could be written. */
  clientGone?: boolean;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: use it as the S3 endpoint. */
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly log: ProxyLogEntry[];
  /** Replaces the plan (undefined: pass everything). */
  setPlan(plan: FaultPlan | undefined): void;
  /** Holds all traffic until resume(). */
  pause(): void;
  resume(): void;
  /** Resolves when no request is being handled (held ones included). */
  idle(): Promise<void>;
  /** Closes the connections of the requests `hang` left open. */
  releaseHung(): void;
  /** Forwards the requests `hold` kept; resolves when they are done. */
  releaseHeld(): Promise<void>;
  close(): Promise<void>;
}

export async function startFaultProxy(upstream: string, plan?: FaultPlan): Promise<FaultProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true });
  let current = plan;
  let n = 0;
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  let busy = 0;
  let idleWaiters: (() => void)[] = [];
  const log: ProxyLogEntry[] = [];
  const sockets = new Set<Socket>();
  let hung: Socket[] = [];
  let held: { go: () => void; done: Promise<void> }[] = [];

  const settle = () => {
    busy--;
    if (busy === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const info: ProxiedRequest = {
      n: ++n,
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
    };
    const fault = current?.(info) ?? {};
    const action = fault.action ?? 'pass';
    const entry: ProxyLogEntry = {
      n: info.n,
      method: info.method,
      path: info.path,
      action,
      delayMs: fault.delayMs ?? 0,
    };
    log.push(entry);
    if (fault.delayMs) await sleep(fault.delayMs);
    await gate;
    if (action === 'drop') {
      req.socket.destroy();
      return;
    }
    if (action === 'hang') {
      hung.push(req.socket);
      return;
    }
    if (action === 'hold') {
      let go!: () => void;
      let finished!: () => void;
      const released = new Promise<void>((r) => (go = r));
      held.push({ go, done: new Promise<void>((r) => (finished = r)) });
      await released;
      try {
        await answerWith(await forward(target, agent, req, body));
      } finally {
        finished();
      }
      return;
    }
    if (action === 'error') {
      const status = fault.status ?? 503;
      const code = status === 500 ? 'InternalError' : 'ServiceUnavailable';
      const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected by the fault proxy</Message></Error>`;
      res.writeHead(status, {
        'content-type': 'application/xml',
        'content-length': Buffer.byteLength(xml),
      });
      res.end(xml);
      return;
    }
    const answer = await forward(target, agent, req, body);
    if (action === 'lose-answer') {
      entry.upstreamStatus = answer.status;
      req.socket.destroy();
      return;
    }
    await answerWith(answer);

    async function answerWith(a: Awaited<ReturnType<typeof forward>>): Promise<void> {
      entry.upstreamStatus = a.status;
      await gate;
      if (req.socket.destroyed || res.destroyed) {
        entry.clientGone = true;
        return;
      }
      res.writeHead(a.status, a.headers);
      res.end(a.body);
    }
  };

  const server = createServer((req, res) => {
    busy++;
    handle(req, res)
      .catch(() => {
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end('fault proxy: upstream failed');
        } else req.socket.destroy();
      })
      .finally(settle);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}`,
    log,
    setPlan(next) {
      current = next;
    },
    pause() {
      if (gate) return;
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    resume() {
      open?.();
      gate = undefined;
      open = undefined;
    },
    idle() {
      return busy === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    releaseHung() {
      for (const s of hung) s.destroy();
      hung = [];
    },
    async releaseHeld() {
      const now = held;
      held = [];
      for (const h of now) h.go();
      await Promise.all(now.map((h) => h.done));
    },
    async close() {
      proxy.resume();
      proxy.releaseHung();
      await proxy.releaseHeld();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
  return proxy;
}

/** A seeded random mix: each request independently gets one fault with the given probabilities. */
export function randomFaults(
  seed: number,
  mix: {
    drop?: number;
    loseAnswer?: number;
    error500?: number;
    error503?: number;
    delay?: { p: number; maxMs: number };
  },
): FaultPlan {
  const random = mulberry32(seed);
  return () => {
    const delayMs =
      mix.delay && random() < mix.delay.p ? Math.floor(random() * mix.delay.maxMs) : 0;
    let r = random();
    const pick = (p: number | undefined) => {
      if (p === undefined) return false;
      if (r < p) return true;
      r -= p;
      return false;
    };
    const fault: Fault = delayMs ? { delayMs } : {};
    if (pick(mix.drop)) return { ...fault, action: 'drop' };
    if (pick(mix.loseAnswer)) return { ...fault, action: 'lose-answer' };
    if (pick(mix.error500)) return { ...fault, action: 'error', status: 500 };
    if (pick(mix.error503)) return { ...fault, action: 'error', status: 503 };
    return fault;
  };
}

/** The fault for the first `times` requests matching `match`; everything else passes. */
export function onceFor(
  match: (req: ProxiedRequest) => boolean,
  fault: Fault,
  times = 1,
): FaultPlan {
  let left = times;
  return (req) => {
    if (left > 0 && match(req)) {
      left--;
      return fault;
    }
    return undefined;
  };
}

const HOP_BY_HOP = new Set([
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
  for (const [name, value] of Object.entries(req.headers)) {
    // The body is complete already: no 100-continue dance upstream (Expect is never signed by SigV4).
    if (value === undefined || HOP_BY_HOP.has(name) || name === 'expect') continue;
    headers[name] = value;
  }
  headers['content-length'] = String(body.byteLength);
  return new Promise((resolve, reject) => {
    const out = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
        agent,
      },
      (res) => {
        readBody(res).then((data) => {
          const answerHeaders: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined && !HOP_BY_HOP.has(name)) answerHeaders[name] = value;
          }
          // A HEAD answer keeps the object's length; any other answer carries exactly the bytes read.
          if (req.method !== 'HEAD') answerHeaders['content-length'] = String(data.byteLength);
          resolve({ status: res.statusCode ?? 502, headers: answerHeaders, body: data });
        }, reject);
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
    // A body cut off by its sender is never passed on as if it were whole.
    stream.on('close', () => {
      if (!stream.complete) reject(new Error('body cut off'));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
