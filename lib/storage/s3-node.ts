// The S3 adapter's object requests and listings on Node, over node:http(s) with SigV4 from node:crypto.
//
// Why not the SDK for these: through S3Store on radosgw (150 KB bodies, keep-alive; `npm run bench:s3-wire`),
// a GET costs 4.7 ms of CPU through @aws-sdk/client-s3 and 2.0 ms here, a PUT 4.4 and 2.1 ms, a PUT refused
// with 412 4.6 and 2.0 ms, a LIST of 20 keys 5.1 and 1.7 ms. Satchel's writes send two to three requests
// where a whole-object store sends one, and writers of one process contend on its CPU, so that cost was
// most of an append's time. Batch deletes and multipart uploads (rare) stay on the SDK, and so does where
// requests go: the endpoint is the one the client resolves (S3StoreOptions.wire).
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { S3Wire, S3WireRequest, S3WireResponse, S3WireTarget } from './s3.js';
import '../model/bytes-node.js';

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
/** As the SDK: a server clock more than 5 minutes away from ours is taken as ours being wrong. */
const SKEW_MS = 5 * 60 * 1000;
/** As the SDK: bodies from 2 MiB ask `Expect: 100-continue`, so that a refused PUT is not uploaded first. */
const EXPECT_CONTINUE_FROM = 2 * 1024 * 1024;
/**
 * How long such a PUT waits, once connected, for the server's `100 Continue` before it sends the body
 * anyway: what a server that ignores the header costs. Our choice; the SDK waits 6 s.
 */
const CONTINUE_WAIT_MS = 1000;

/**
 * `S3StoreOptions.wire` for Node (the server and Lambda entries): GET, HEAD, PUT and DELETE of one object and
 * listings of the bucket, signed with the credentials the store's S3 client resolves (static keys, the
 * environment, a profile, a role), on a keep-alive pool of its own, to the endpoint the client resolves
 * for the bucket (`target.locate`).
 */
export function nodeWire(target: S3WireTarget): S3Wire {
  let ready: Promise<Route> | undefined;
  return async (req) => {
    // A failed resolution is not kept: the next request asks again.
    const route = await (ready ??= target.locate().then(
      (at) => routeOf(target, at.url, at.signingRegion),
      (err: unknown) => {
        ready = undefined;
        throw err;
      },
    ));
    const creds = await target.credentials();
    // A request of the bucket itself (a listing) names no key: its path is the bucket's own.
    const path = req.key === '' ? route.root || '/' : `${route.root}${keyPath(req.key)}`;
    const query = canonicalQuery(req.query);
    const now = new Date(Date.now() + target.clock.offset);
    const headers: Record<string, string> = {
      ...req.headers,
      host: route.host,
      'x-amz-date': now.toISOString().replace(/[-:]|\.\d{3}/g, ''),
      'x-amz-content-sha256': req.body ? sha256(req.body) : EMPTY_SHA256,
      ...(creds.sessionToken ? { 'x-amz-security-token': creds.sessionToken } : {}),
      ...(req.body ? { 'content-length': String(req.body.byteLength) } : {}),
      ...(req.body && req.body.byteLength >= EXPECT_CONTINUE_FROM
        ? { expect: '100-continue' }
        : {}),
    };
    headers.authorization = route.keys.authorization(req.method, path, query, headers, creds);
    const res = await send(route, {
      method: req.method,
      path: query ? `${path}?${query}` : path,
      headers,
      req,
    });
    if (res.status >= 300) correctClock(target, res.header('date'));
    return res;
  };
}

/** Where the bucket's objects are, and how to reach them. */
interface Route {
  hostname: string;
  port: string | undefined;
  /** The Host header. */
  host: string;
  /** The path before the key: the endpoint's own path, and the bucket when addressed by path. */
  root: string;
  agent: http.Agent;
  request: typeof http.request;
  keys: SigningKeys;
  /** The longest wait for a connection, and the longest silence on one. */
  connectMs: number;
  idleMs: number;
}

/** One keep-alive pool per S3 client and protocol, as the client's own handler keeps. */
const agents = new WeakMap<object, { http?: http.Agent; https?: https.Agent }>();

function agentOf(target: S3WireTarget, secure: boolean): http.Agent {
  let pools = agents.get(target.pool);
  if (!pools) agents.set(target.pool, (pools = {}));
  return secure
    ? (pools.https ??= new https.Agent({ keepAlive: true, maxSockets: 50 }))
    : (pools.http ??= new http.Agent({ keepAlive: true, maxSockets: 50 }));
}

function routeOf(target: S3WireTarget, url: URL, signingRegion: string): Route {
  const secure = url.protocol === 'https:';
  return {
    // An IPv6 literal is bracketed in the URL and the Host header, not in what is connected to.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port || undefined,
    host: url.host,
    root: url.pathname.replace(/\/+$/, ''),
    agent: agentOf(target, secure),
    request: secure ? https.request : http.request,
    keys: new SigningKeys(signingRegion),
    connectMs: target.connectMs,
    idleMs: target.requestMs,
  };
}

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  req: S3WireRequest;
}

/**
 * One request and its whole answer. The timeouts and their errors are the SDK's NodeHttpHandler's (a
 * `TimeoutError` when the connection takes longer than connectMs, or the socket is silent for idleMs), so
 * that the adapter's retries and their classification are the same on both paths.
 */
function send(route: Route, s: Sent): Promise<S3WireResponse> {
  return new Promise((resolve, reject) => {
    const { req } = s;
    const r = route.request(
      {
        agent: route.agent,
        hostname: route.hostname,
        port: route.port,
        method: s.method,
        path: s.path,
        headers: s.headers,
        signal: req.signal,
      },
      (res) => {
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (!Number.isNaN(declared)) req.onLength?.(declared);
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          size += c.length;
          req.onData?.(c.length);
        });
        res.on('error', reject);
        res.on('aborted', () =>
          reject(Object.assign(new Error('answer cut off'), { code: 'ECONNRESET' })),
        );
        res.on('end', () => {
          const body = new Uint8Array(size);
          let at = 0;
          for (const c of chunks) {
            body.set(c, at);
            at += c.length;
          }
          const headers = res.headers;
          resolve({
            status: res.statusCode ?? 0,
            header: (name) => {
              const v = headers[name.toLowerCase()];
              return Array.isArray(v) ? v.join(', ') : v;
            },
            body,
          });
        });
      },
    );
    r.on('error', reject);
    r.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => {
        r.destroy(
          timeoutError(
            `Socket timed out without establishing a connection within ${route.connectMs} ms`,
          ),
        );
      }, route.connectMs);
      // Both listeners go once it connects: a pooled socket must not keep this request (and its body) alive.
      const settle = () => {
        clearTimeout(timer);
        socket.off('connect', settle);
        socket.off('close', settle);
      };
      socket.on('connect', settle);
      socket.on('close', settle);
    });
    r.setTimeout(route.idleMs, () =>
      r.destroy(timeoutError(`Connection timed out after ${route.idleMs} ms`)),
    );
    if (s.headers.expect && req.body) sendAfterContinue(r, req.body);
    else r.end(req.body);
  });
}

/**
 * Sends the body once the server says `100 Continue`, or after CONTINUE_WAIT_MS of silence once connected
 * (a server that ignores the header); a server that answers first (a 412) gets no body, and the
 * connection is not used again.
 */
function sendAfterContinue(r: http.ClientRequest, body: Uint8Array): void {
  let decided = false;
  const decide = (send: boolean) => {
    if (decided) return;
    decided = true;
    clearTimeout(timer);
    r.off('continue', onContinue);
    r.off('response', onResponse);
    r.off('close', onClose);
    if (send) return void r.end(body);
    r.shouldKeepAlive = false;
    r.end();
  };
  const onContinue = () => decide(true);
  const onResponse = () => decide(false);
  const onClose = () => {
    decided = true;
    clearTimeout(timer);
  };
  // The wait starts once connected: time queued for a socket, or connecting, is not the server's silence.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (!decided) timer = setTimeout(onContinue, CONTINUE_WAIT_MS);
  };
  r.once('socket', (socket) => (socket.connecting ? socket.once('connect', arm) : arm()));
  r.on('continue', onContinue);
  r.on('response', onResponse);
  r.on('close', onClose);
  r.flushHeaders();
}

function timeoutError(message: string): Error {
  return Object.assign(new Error(message), { name: 'TimeoutError' });
}

/** As the SDK does after an error answer: a server clock far from ours sets the offset the next signing uses. */
function correctClock(target: S3WireTarget, date: string | undefined): void {
  const server = date ? Date.parse(date) : NaN;
  if (Number.isFinite(server) && Math.abs(server - (Date.now() + target.clock.offset)) > SKEW_MS)
    target.clock.offset = server - Date.now();
}

function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The URL of `key` under a bucket's endpoint (`S3WireTarget.locate`), as the wire sends it. */
export function objectUrl(base: URL, key: string): URL {
  const url = new URL(base.href);
  url.pathname = url.pathname.replace(/\/+$/, '') + keyPath(key);
  return url;
}

/** A query string as SigV4 wants it and as sent: sorted by name, every byte but the unreserved escaped. */
function canonicalQuery(query: Record<string, string> | undefined): string {
  if (!query) return '';
  return Object.keys(query)
    .sort()
    .map((k) => `${encodeSegment(k)}=${encodeSegment(query[k]!)}`)
    .join('&');
}

/** A key as the path after the bucket's: each segment encoded, the slashes kept. */
function keyPath(key: string): string {
  return `/${key.split('/').map(encodeSegment).join('/')}`;
}

/** A key segment as SigV4 and S3 want it: RFC 3986, every byte but the unreserved ones escaped. */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** SigV4 for S3 (service `s3`), with the day's signing key kept per secret. */
class SigningKeys {
  private cached: { day: string; secret: string; key: Buffer } | undefined;

  constructor(private readonly region: string) {}

  /** The Authorization header of a request, signing `host` and every `x-amz-*` header. */
  authorization(
    method: string,
    path: string,
    query: string,
    headers: Record<string, string>,
    creds: Credentials,
  ): string {
    const stamp = headers['x-amz-date']!;
    const day = stamp.slice(0, 8);
    const names = Object.keys(headers)
      .filter((n) => n === 'host' || n.startsWith('x-amz-'))
      .sort();
    const signed = names.join(';');
    const canonical = [
      method,
      path,
      query,
      ...names.map((n) => `${n}:${headers[n]!.trim()}`),
      '',
      signed,
      headers['x-amz-content-sha256'],
    ].join('\n');
    const scope = `${day}/${this.region}/s3/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256(canonical)].join('\n');
    const signature = createHmac('sha256', this.key(day, creds.secretAccessKey))
      .update(toSign)
      .digest('hex');
    return `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signed}, Signature=${signature}`;
  }

  private key(day: string, secret: string): Buffer {
    const c = this.cached;
    if (c && c.day === day && c.secret === secret) return c.key;
    const hmac = (k: Buffer | string, s: string) => createHmac('sha256', k).update(s).digest();
    const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), this.region), 's3'), 'aws4_request');
    this.cached = { day, secret, key };
    return key;
  }
}
