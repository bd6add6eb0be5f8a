// Node entry: the local server. `npm start` runs it; SATCHEL_STORAGE=s3 points it at a bucket.
// A configuration error is one line on stderr and exit code 1; storage that does not answer at start is
// not one (the server starts degraded and answers 503 until storage returns).
import type { ServerResponse } from 'node:http';
import { BlockList, isIP, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import {
  ConfigError,
  createServerLogger,
  describeConfig,
  checkPort,
  loadConfig,
  parseTokens,
} from '../lib/server/config.js';
import { createApp } from '../lib/http/app.js';
import { createNodeServer } from '../lib/http/node-server.js';
import { LocalStore } from '../lib/storage/local.js';
import { S3Store } from '../lib/storage/s3.js';
import { nodeWire } from '../lib/storage/s3-node.js';

/** Prints one line and exits 1: for mistakes a person fixes in the environment. */
function refuse(message: string): never {
  console.error(`satchel: ${message}`);
  process.exit(1);
}

const config = await loadConfig(process.env, 'local')
  .then((config) => (checkPort(config.port), config))
  .catch((err: unknown) =>
    refuse(err instanceof ConfigError ? err.message : `cannot read the configuration: ${err}`),
  );
if (config.storage.kind === 'r2')
  refuse('SATCHEL_STORAGE=r2 works only on Workers; use local or s3 here');
const objects =
  config.storage.kind === 'local'
    ? new LocalStore(resolve(config.storage.dir))
    : new S3Store({ ...config.storage.s3, wire: nodeWire });
const open = config.tokens === null;
// Without tokens, the API is open: only listen on loopback then.
const hostname = open ? '127.0.0.1' : process.env.HOST || '0.0.0.0';
const isTTY = Boolean(process.stdout.isTTY);
const log = createServerLogger(config, { isTTY });
const { app, background, sessions, webhooks, continuer } = createApp({
  config,
  objects,
  allowOpen: true,
  log,
});

// An IPv6 address goes in brackets in a URL (http://[::1]:8787): in the banner, and as the authority of a
// request without Host (HTTP/1.0), which was answered 400 "malformed" with HOST=::1 (review s59i).
const authority = hostname.includes(':') ? `[${hostname}]` : hostname;
const server = createNodeServer(app.fetch, authority, log);
server.listen(config.port, hostname, () => {
  void banner(`http://${authority}:${(server.address() as AddressInfo).port}`);
});

/** The start banner: where it listens, what it runs with (never a secret), whether storage answers. */
async function banner(url: string): Promise<void> {
  const ping = (await objects.ping?.(1500)) ?? { ok: true, latencyMs: 0 };
  const fields: Record<string, string> = {
    ...describeConfig(config),
    ...(config.storage.kind === 'local'
      ? { storage: `local folder ${objects.name.slice(6)}` }
      : {}),
    storage_state: ping.ok
      ? `answering (${ping.latencyMs} ms)`
      : ping.reason === 'denied'
        ? `refusing access (${ping.error}): requests answer 503 until ` +
          (config.storage.kind === 'local'
            ? 'the data folder takes writes (its permissions; a read-only disk)'
            : /AccessDenied/.test(ping.error ?? '')
              ? "the credentials' policy allows the S3 actions docs/deploy.md lists"
              : /Token/.test(ping.error ?? '')
                ? 'the temporary credentials are refreshed (AWS_SESSION_TOKEN with its keys)'
                : 'the credentials are fixed (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)')
        : /set S3_REGION=/.test(ping.error ?? '')
          ? `in another region (${ping.error}): requests answer 503 until S3_REGION is set`
          : `not answering (${ping.error ?? ping.reason}): starting degraded, requests answer 503 until it returns`,
  };
  Object.assign(fields, await reach());
  const msg = `satchel listening on ${url}`;
  // As JSON in a JSON log; as text otherwise, also with SATCHEL_LOG=off (which silences the per-request
  // log): open mode is announced at start whatever the log.
  if ((config.log ?? (isTTY ? 'pretty' : 'json')) === 'json') return log.info(msg, fields);
  console.log(msg);
  for (const [k, v] of Object.entries(fields)) console.log(`  ${`${k}:`.padEnd(15)} ${v}`);
}
/**
 * With tokens the server listens on every interface unless HOST says otherwise: the banner says it is
 * reachable from other machines, and warns of plain tokens a caller on the network could guess: short ones
 * (a `default=x`) and the docs' own examples, `tok_<name>_<digit><2 letters><digit>` (reviews s66g, s66o).
 */
async function reach(): Promise<Record<string, string>> {
  if (open || loopback(hostname)) return {};
  const plain: string[] = [];
  await parseTokens(process.env.SATCHEL_TOKENS ?? '', plain);
  const short = plain.filter(
    (t) => t.length < 16 || /^tok_[a-z_]+_\d[A-Za-z]{2}\d$/.test(t),
  ).length;
  return {
    network: `reachable from other machines (HOST ${hostname}); HOST=127.0.0.1 keeps it on this one`,
    ...(short
      ? {
          warning:
            `${short} of the tokens ${short > 1 ? 'are' : 'is'} under 16 characters or the docs' examples: ` +
            'guessable from the network; make each with `openssl rand -hex 16`',
        }
      : {}),
  };
}
/** Whether `host` is this machine's alone: `localhost`, 127.0.0.0/8 or ::1 in any spelling (review s66h). */
function loopback(host: string): boolean {
  const local = new BlockList();
  local.addSubnet('127.0.0.0', 8, 'ipv4');
  local.addAddress('::1', 'ipv6');
  const v = isIP(host);
  return /^localhost$/i.test(host) || (v > 0 && local.check(host, v === 6 ? 'ipv6' : 'ipv4'));
}
server.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EADDRINUSE')
    refuse(`port ${config.port} on ${hostname} is in use; stop the other process or set PORT`);
  if (err.code === 'EACCES') refuse(`no permission to listen on port ${config.port}; set PORT`);
  if (err.code === 'EADDRNOTAVAIL') refuse(`HOST ${hostname} is not an address of this machine`);
  refuse(`cannot listen on ${hostname}:${config.port}: ${err.code ?? err.message}`);
});
/** How long a stop waits, from the signal, for open requests and the work after answered writes. */
const GRACE_MS = 10_000;
/** How long before GRACE_MS model turns still running are cut off: to release their leases and answer. */
const TURN_CUTOFF_MS = 2000;
let stopping = false;
/**
 * The answers not yet sent. Once stopping, each says `Connection: close`, so a client busy on a kept-alive
 * connection opens a new one (elsewhere) rather than sending on into the stop: it kept the stop waiting for
 * its whole 10 s, and had its last request reset then (review s63g).
 */
const unsent = new Set<ServerResponse>();
server.prependListener('request', (_req, res: ServerResponse) => {
  if (stopping) return void res.setHeader('connection', 'close');
  unsent.add(res);
  res.once('close', () => unsent.delete(res));
});
/**
 * Stops taking requests and, alongside the requests still open, lets the work that follows answered
 * writes finish (log, audit and index records), removes this process's idle pending markers, then exits:
 * at most 10 s after the signal. A model turn still running 8 s after it (a continue or a webhook delivery
 * waiting on its model, up to SATCHEL_MODEL_TIMEOUT_MS) is cut off: it releases its session's lease (which
 * would otherwise block the session's continues, on any server, for the turn timeout + 30 s: review s56d)
 * and answers 502, its message stored; a delivery's failure is logged, to be redelivered. An open request
 * that outlasts the 10 s has its connection closed: an orchestrator's grace period (Docker 10 s, Kubernetes
 * 30 s) must not end in SIGKILL, before the drain ran. Webhook deliveries whose work is still running then
 * are logged as failed, so that the operator redelivers them.
 */
const stop = () => {
  if (stopping) return;
  stopping = true;
  for (const res of unsent) if (!res.headersSent) res.setHeader('connection', 'close');
  const limit = new Promise((r) => setTimeout(r, GRACE_MS).unref());
  const abandon = () =>
    webhooks.abandon(
      'server stopping before the delivery was stored or its model turn ended; redeliver',
    );
  const cutOff = () => {
    webhooks.stopping('server stopping before the model turn ended; redeliver');
    continuer.stopTurns();
  };
  setTimeout(cutOff, GRACE_MS - TURN_CUTOFF_MS).unref();
  const closed = new Promise((r) => server.close(r));
  server.closeIdleConnections(); // kept-alive connections with no request would hold close() open
  // The work of requests that end meanwhile is drained once they have all ended.
  const finish = Promise.all([closed, background.drain()])
    .then(() => background.drain())
    .then(() => sessions.retireMarkers());
  void Promise.race([finish, limit]).finally(() => {
    abandon();
    server.closeAllConnections();
    process.exit(0);
  });
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
