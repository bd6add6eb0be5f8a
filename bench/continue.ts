/**
 * Continue and webhook benchmark (`npm run bench:continue`; `-- --quick` is a smoke run that writes
 * nothing). Starts its own radosgw and a local OpenAI-compatible chat server that answers at once
 * (test/support/chat-server.ts), builds the app as functions/node.ts does (loadConfig with SATCHEL_TOKENS,
 * SATCHEL_HOOKS, SATCHEL_MODEL_URL/SATCHEL_MODEL; an S3Store) and serves it over real HTTP with
 * @hono/node-server on 127.0.0.1, so the 202 and the work after it behave as in production on Node. Two
 * servers on two prefixes of one bucket: one with the model configured, one without. Every request goes
 * through fetch (keep-alive), one at a time.
 *
 * 1. Webhooks, signed `POST /v1/hooks/{name}` (X-Satchel-Signature), round robin over three hooks in their
 *    own namespaces: `new`, `latest` (three sessions made first) and a fixed id. Per delivery:
 *    - 202: from sending the request to having read the whole 202 response;
 *    - stored: from sending the request to the moment radosgw acknowledged the PUT of the session object
 *      holding the delivery's message (the store is wrapped to note when a PUT whose body holds the
 *      delivery's unique marker returns). A GET of the session reads the object (never a cache), so the
 *      message is visible through `GET /v1/sessions/{id}` from then on; each delivery is then checked
 *      through that GET;
 *    - drained: from sending the request until every piece of background work the request started has
 *      settled (`background.drain()`: the marker done, the search record, with a model the whole turn).
 * 2. Continue, `POST /v1/sessions/{id}/continue` with an Idempotency-Key, on sessions of about 10 KB,
 *    100 KB and 1 MB (realistic tool-using transcripts): total time (request sent to response read), the
 *    time the chat server spent on its requests (its own clock: headers in to last byte out), and the
 *    difference, Satchel's overhead; also the time until the user message was stored (as above). Then
 *    continues whose model calls `session_search` once before answering (two model calls; the overhead
 *    includes the search). Without a model: the same continues, `model_turn: false`.
 * The first WARMUP requests of each series are left out.
 */
import { writeSections } from './results.js';
import { serve, type ServerType } from '@hono/node-server';
import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../lib/server/config.js';
import { createApp } from '../lib/http/app.js';
import type { Logger } from '../lib/model/log.js';
import type { ListOptions, ObjectStore, PutOptions } from '../lib/storage/port.js';
import { S3Store } from '../lib/storage/s3.js';
import { startChatServer, type ChatServer } from '../test/support/chat-server.js';
import { startRadosgw, type S3Target } from '../test/support/radosgw.js';
import { conversation, latency, q } from './support.js';

const QUICK = process.argv.includes('--quick');
const here = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(here, 'results.json');
const OWN_RESULTS = path.join(here, 'results.continue.json');
const DELIVERIES = { model: QUICK ? 15 : 210, plain: QUICK ? 15 : 105 };
const CONTINUES = QUICK ? 8 : 60;
const TOOL_CONTINUES = QUICK ? 6 : 40;
const SIZES = [10_000, 100_000, 1_000_000];
const WARMUP = 3;
const SECRET = 'bench-hook-secret';
const TOKEN = {
  bench: 'tok_bench_continue_0123',
  hnew: 'tok_bench_hnew_0123456',
  hlatest: 'tok_bench_hlatest_01234',
  hfixed: 'tok_bench_hfixed_012345',
};
const HOOKS = {
  new: { secret: SECRET, namespace: 'hnew', session: 'new' },
  latest: { secret: SECRET, namespace: 'hlatest', session: 'latest' },
  fixed: { secret: SECRET, namespace: 'hfixed', session: 'ops-log' },
} as const;
type HookName = keyof typeof HOOKS;
const TOKEN_OF: Record<string, string> = {
  hnew: TOKEN.hnew,
  hlatest: TOKEN.hlatest,
  hfixed: TOKEN.hfixed,
  bench: TOKEN.bench,
};

function log(line: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
}

/**
 * The object store under the app, noting when a session PUT holding a given marker was acknowledged.
 * Only session objects are searched, and only while someone waits.
 */
class LandedStore implements ObjectStore {
  readonly name: string;
  private readonly waiting = new Map<string, (landed: { at: number; key: string }) => void>();

  constructor(private readonly inner: ObjectStore) {
    this.name = inner.name;
  }

  waitFor(marker: string, timeoutMs = 30_000): Promise<{ at: number; key: string } | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(marker);
        resolve(null);
      }, timeoutMs);
      this.waiting.set(marker, (landed) => {
        clearTimeout(timer);
        this.waiting.delete(marker);
        resolve(landed);
      });
    });
  }

  get(key: string) {
    return this.inner.get(key);
  }

  async put(key: string, body: Uint8Array, options?: PutOptions) {
    const out = await this.inner.put(key, body, options);
    if (this.waiting.size > 0 && key.includes('/sessions/')) {
      const at = performance.now();
      const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      for (const [marker, done] of this.waiting) if (bytes.includes(marker)) done({ at, key });
    }
    return out;
  }

  delete(keys: string | string[]) {
    return this.inner.delete(keys);
  }

  list(prefix: string, options?: ListOptions) {
    return this.inner.list(prefix, options);
  }

  // As in production: the existence checks HEAD rather than LIST.
  head(key: string) {
    return this.inner.head!(key);
  }
}

interface Served {
  label: string;
  url: string;
  landed: LandedStore;
  drain: () => Promise<void>;
  warnings: string[];
  close: () => Promise<void>;
}

async function startServer(
  rgw: S3Target,
  prefix: string,
  label: string,
  chat: ChatServer | undefined,
): Promise<Served> {
  const landed = new LandedStore(
    new S3Store({
      bucket: rgw.bucket,
      endpoint: rgw.endpoint,
      region: rgw.region,
      forcePathStyle: true,
      accessKeyId: rgw.accessKeyId,
      secretAccessKey: rgw.secretAccessKey,
      prefix: `${prefix}${label}/`,
    }),
  );
  const config = await loadConfig(
    {
      SATCHEL_STORAGE: 's3',
      S3_BUCKET: rgw.bucket,
      S3_ENDPOINT: rgw.endpoint,
      SATCHEL_TOKENS: Object.entries(TOKEN)
        .map(([ns, tok]) => `${ns}=${tok}`)
        .join(','),
      SATCHEL_HOOKS: JSON.stringify(HOOKS),
      ...(chat ? { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'bench-model' } : {}),
    },
    'local',
  );
  const warnings: string[] = [];
  const quietLog: Logger = {
    info: () => undefined,
    warn: (m, f) => void warnings.push(`${m} ${JSON.stringify(f ?? {})}`),
    error: (m, f) => void warnings.push(`error: ${m} ${JSON.stringify(f ?? {})}`),
  };
  const built = createApp({ config, objects: landed, log: quietLog });
  let server: ServerType | undefined;
  const port = await new Promise<number>((resolve) => {
    server = serve(
      { fetch: built.app.fetch, port: 0, hostname: '127.0.0.1' },
      (info: AddressInfo) => resolve(info.port),
    );
  });
  return {
    label,
    url: `http://127.0.0.1:${port}`,
    landed,
    drain: () => built.background.drain(),
    warnings,
    close: () => new Promise<void>((resolve) => server!.close(() => resolve())),
  };
}

async function api(
  s: Served,
  method: string,
  pathname: string,
  ns: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${s.url}${pathname}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN_OF[ns]}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as Record<string, any>) : {};
}

// ---- 1. webhooks ----

async function benchWebhooks(s: Served, chat: ChatServer | undefined, deliveries: number) {
  for (let i = 0; i < 3; i++)
    await api(s, 'POST', '/v1/sessions', 'hlatest', {
      task: `on call, day ${i}`,
      messages: [{ role: 'user', content: 'watch the deploys' }],
    });
  const names: HookName[] = ['new', 'latest', 'fixed'];
  const per = Object.fromEntries(
    names.map((n) => [
      n,
      { accepted: [] as number[], stored: [] as number[], drained: [] as number[] },
    ]),
  );
  const all = { accepted: [] as number[], stored: [] as number[], drained: [] as number[] };
  let failures = 0;
  let checked = 0;
  for (let i = 0; i < deliveries; i++) {
    const name = names[i % names.length]!;
    const marker = `bench-${s.label}-${i}-${randomBytes(6).toString('hex')}`;
    const body = JSON.stringify({
      type: 'deploy.failed',
      service: 'checkout-api',
      environment: 'production',
      run: i,
      marker,
      reason:
        'The canary returned HTTP 502 for 12% of requests over 5 minutes; rollback started automatically.',
    });
    const t = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'x-satchel-signature': `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`,
      'x-satchel-delivery': `d-${s.label}-${i}`,
    };
    if (chat)
      chat.script({
        reply: 'Noted: the checkout-api deploy failed its canary; the rollback is running.',
      });
    const landing = s.landed.waitFor(marker);
    const t0 = performance.now();
    const res = await fetch(`${s.url}/v1/hooks/${name}`, { method: 'POST', headers, body });
    const answer = (await res.json()) as { session?: string };
    const accepted = performance.now() - t0;
    if (res.status !== 202) throw new Error(`hook ${name}: HTTP ${res.status}`);
    const landed = await landing;
    await s.drain();
    const drained = performance.now() - t0;
    if (!landed) {
      failures++;
      continue;
    }
    const stored = landed.at - t0;
    // Visible through the API: the session the PUT went to holds the marker.
    const id = answer.session ?? /\/sessions\/([^/]+)\.json$/.exec(landed.key)![1]!;
    const got = await api(s, 'GET', `/v1/sessions/${id}`, HOOKS[name].namespace);
    if (!JSON.stringify(got.messages).includes(marker))
      throw new Error(`delivery ${i} is not visible in ${id}`);
    checked++;
    if (i < WARMUP * names.length) continue;
    for (const into of [per[name]!, all]) {
      into.accepted.push(accepted);
      into.stored.push(stored);
      into.drained.push(drained);
    }
  }
  const figures = (x: typeof all) => ({
    accepted202: latency(x.accepted),
    toStored: latency(x.stored),
    toDrained: latency(x.drained),
  });
  const out = {
    deliveries,
    measured: all.accepted.length,
    checkedVisibleThroughGet: checked,
    failures,
    ...figures(all),
    byTarget: Object.fromEntries(names.map((n) => [n, figures(per[n]!)])),
  };
  log(
    `  webhooks (${s.label}): ${deliveries} deliveries, 202 p50 ${out.accepted202.p50.value} / p99 ${out.accepted202.p99.value} ms, ` +
      `stored p50 ${out.toStored.p50.value} / p99 ${out.toStored.p99.value} ms, drained p50 ${out.toDrained.p50.value} / p99 ${out.toDrained.p99.value} ms, ${failures} failed`,
  );
  return out;
}

// ---- 2. continue ----

async function benchContinue(
  s: Served,
  chat: ChatServer | undefined,
  bytes: number,
  n: number,
  toolRound: boolean,
) {
  const created = await api(s, 'POST', '/v1/sessions', 'bench', {
    task: `continue bench ${bytes} bytes`,
    messages: conversation(bytes),
  });
  const id = created.id as string;
  const total: number[] = [];
  const model: number[] = [];
  const overhead: number[] = [];
  const stored: number[] = [];
  let sessionBytes = created.bytes as number | undefined;
  for (let i = 0; i < n; i++) {
    const marker = `q-${s.label}-${bytes}-${i}-${randomBytes(4).toString('hex')}`;
    if (chat) {
      if (toolRound)
        chat.script({
          toolCalls: [
            {
              name: 'session_search',
              arguments: { action: 'search', query: 'retry configuration' },
            },
          ],
        });
      chat.script({
        reply: `Step ${i}: the retries are configured once at start-up; nothing else reads them.`,
      });
    }
    const servedBefore = chat?.served.length ?? 0;
    const landing = s.landed.waitFor(marker);
    const t0 = performance.now();
    const answer = await api(
      s,
      'POST',
      `/v1/sessions/${id}/continue`,
      'bench',
      { message: `[${marker}] Where are the retries configured, and who reads them?` },
      { 'idempotency-key': `k-${marker}` },
    );
    const t = performance.now() - t0;
    const landed = await landing;
    if (answer.model_turn !== Boolean(chat))
      throw new Error(`continue: model_turn ${answer.model_turn}`);
    const served = chat ? chat.served.slice(servedBefore) : [];
    if (chat && served.length !== (toolRound ? 2 : 1))
      throw new Error(`continue: ${served.length} model calls`);
    sessionBytes = answer.bytes;
    if (i < WARMUP) continue;
    const m = served.reduce((a, x) => a + x.ms, 0);
    total.push(t);
    model.push(m);
    overhead.push(t - m);
    if (landed) stored.push(landed.at - t0);
  }
  await s.drain();
  const out = {
    sessionBytes: q(bytes, 'bytes of messages at the start (about)', 0),
    storedBytesAtEnd: q(sessionBytes ?? 0, 'bytes', 0),
    modelCallsPerContinue: chat ? (toolRound ? 2 : 1) : 0,
    total: latency(total),
    ...(chat ? { modelServerTime: latency(model), overheadExcludingModel: latency(overhead) } : {}),
    toMessageStored: latency(stored),
  };
  const shown = chat ? out.overheadExcludingModel! : out.total;
  log(
    `  continue (${s.label}${toolRound ? ', one session_search round' : ''}), ${bytes} B: ${chat ? 'overhead' : 'total'} p50 ${shown.p50.value} / p99 ${shown.p99.value} ms` +
      (chat ? ` (model server p50 ${out.modelServerTime!.p50.value} ms)` : '') +
      `; message stored p50 ${out.toMessageStored.p50.value} ms`,
  );
  return out;
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = os.loadavg();
  log(
    `continue bench${QUICK ? ' (quick: writes nothing)' : ''}; load average ${loadAtStart.map((x) => x.toFixed(2)).join(' ')}`,
  );
  const rgw = await startRadosgw({ bucket: 'satchel-continue-bench', log: (l) => log(l) });
  const chat = await startChatServer();
  const prefix = `continue-${Date.now()}/`;
  const withModel = await startServer(rgw, prefix, 'model', chat);
  const plain = await startServer(rgw, prefix, 'plain', undefined);
  let section: Record<string, unknown>;
  try {
    log('webhooks, model configured');
    const hooksModel = await benchWebhooks(withModel, chat, DELIVERIES.model);
    log('webhooks, no model');
    const hooksPlain = await benchWebhooks(plain, undefined, DELIVERIES.plain);
    log('continue, model configured');
    const contModel = [];
    for (const bytes of SIZES)
      contModel.push(await benchContinue(withModel, chat, bytes, CONTINUES, false));
    const contTool = await benchContinue(withModel, chat, SIZES[0]!, TOOL_CONTINUES, true);
    log('continue, no model');
    const contPlain = [];
    for (const bytes of SIZES)
      contPlain.push(await benchContinue(plain, undefined, bytes, CONTINUES, false));
    const warnings = [...withModel.warnings, ...plain.warnings];
    if (warnings.length)
      log(`warnings logged by the app: ${warnings.length}; first: ${warnings[0]}`);
    section = {
      date: new Date(started).toISOString(),
      command: 'npm run bench:continue (bench/continue.ts)',
      seconds: q((Date.now() - started) / 1000, 's', 0),
      machine: {
        cores: os.cpus().length,
        loadAverage: {
          start: loadAtStart.map((x) => q(x, '', 2).value),
          end: os.loadavg().map((x) => q(x, '', 2).value),
        },
      },
      setup:
        'radosgw (single-node Ceph, memstore) and the app on this machine; the app built by createApp from loadConfig, an S3Store, served by @hono/node-server on 127.0.0.1; ' +
        'requests by fetch with keep-alive, one at a time; the model: test/support/chat-server.ts answering at once (OpenAI-compatible); ' +
        `the first ${WARMUP} requests of each series (for webhooks, of each target) are left out`,
      measured: {
        accepted202: 'signed POST /v1/hooks/{name} sent → whole 202 response read by the client',
        toStored:
          'the same start → radosgw acknowledged the PUT of the session object that holds the message (a GET reads the object, so from then on GET /v1/sessions/{id} shows it; each delivery was checked through that GET)',
        toDrained:
          'the same start → every piece of background work of the request settled (marker done, search record; with a model, the whole turn stored)',
        continueTotal:
          'POST /v1/sessions/{id}/continue (with Idempotency-Key) sent → whole response read',
        modelServerTime:
          "the chat server's own time for its requests in that continue (headers in → last byte out)",
        overheadExcludingModel: 'continueTotal − modelServerTime, per request',
        toMessageStored:
          "continue sent → radosgw acknowledged the session PUT holding the user's message",
      },
      webhooks: { withModel: hooksModel, withoutModel: hooksPlain },
      continue: {
        withModel: contModel,
        withModelOneSearchRound: contTool,
        withoutModel: contPlain,
      },
      appWarnings: warnings.length,
    };
  } finally {
    await withModel.close();
    await plain.close();
    await chat.close();
    await rgw.stop();
  }
  if (QUICK) {
    log('quick run: nothing written');
    return;
  }
  writeFileSync(OWN_RESULTS, JSON.stringify(section, null, 2) + '\n');
  // Read-modify-write, as late as possible: other benchmarks write their own sections of this file.
  writeSections(RESULTS, { continue: section });
  log(
    `wrote bench/results.continue.json and the continue section of bench/results.json (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
