/**
 * The three systems of bench/peer.ts, behind one interface: Strands' S3Storage (driven as its
 * SessionManager drives it for an agent), Satchel in process (SessionStore over S3Store, as bench/support.ts
 * builds it) and Satchel through HTTP (the app of functions/node.ts on a loopback port, as
 * test/support/satchel-server.ts runs it). Every S3 client of a system carries one WireMeter, so requests
 * and bytes are counted the same way for all three, below the code under test.
 */
import { serve, type ServerType } from '@hono/node-server';
import type { S3Client } from '@aws-sdk/client-s3';
import { Agent, Message, SessionManager, TextBlock } from '@strands-agents/sdk';
import { S3Storage as StrandsS3Storage } from '@strands-agents/sdk/storage';
import type { AddressInfo } from 'node:net';
import { decodeBody } from '../lib/client/client.js';
import { createApp } from '../lib/http/app.js';
import { createLogger } from '../lib/model/log.js';
import type { Message as SatchelMessage } from '../lib/model/session.js';
import { loadConfig, type SatchelConfig } from '../lib/server/config.js';
import { SessionStore, type SessionStoreOptions } from '../lib/sessions/store.js';
import { CountingStore } from '../lib/storage/counting.js';
import type { ObjectStore } from '../lib/storage/port.js';
import { S3Store, type S3StoreOptions, type S3Wire, type S3WireTarget } from '../lib/storage/s3.js';
import { nodeWire } from '../lib/storage/s3-node.js';
import { newClient, productionSessionStore, wireCommand, type Target } from './support.js';

// ---------------------------------------------------------------------------------------------------------
// Messages

/** One chat message as text; each system stores it in its own shape. */
export interface Msg {
  role: 'user' | 'assistant';
  text: string;
}

const SENTENCES = [
  'The function reads the configuration once at start-up and validates it with the schema.',
  'Errors are mapped to problem details at the edge so that handlers stay small and testable.',
  'I ran the test suite again; two tests in the retry module still fail with a timeout.',
  'The migration backfills created_by on old audit rows in batches of five hundred.',
  'Next I will read the webhook handler and make the retry path idempotent.',
  'The dashboard query issues one request per row; an index on tenant_id removes the N+1.',
  'Streaming the CSV importer keeps memory flat even for two gigabyte files.',
  'The snapshot tests broke after the Node upgrade because the error messages changed.',
];

/** A message of about `bytes` bytes of text, with `marker` first (e.g. `[w3-17]`) so it can be found again. */
export function message(i: number, marker: string, bytes = 1000): Msg {
  let text = marker ? `[${marker}] ` : '';
  let k = i;
  while (text.length < bytes) text += SENTENCES[k++ % SENTENCES.length] + ' ';
  return { role: i % 2 === 0 ? 'user' : 'assistant', text: text.slice(0, bytes) };
}

export const toSatchel = (m: Msg): SatchelMessage => ({ role: m.role, content: m.text });

// ---------------------------------------------------------------------------------------------------------
// Counting on the wire

export interface WireCounts {
  requests: number;
  byCommand: Record<string, number>;
  /** Object bodies sent (PutObject, UploadPart). */
  bytesOut: number;
  /** Object bodies received (GetObject ContentLength). */
  bytesIn: number;
  /** Conditional writes refused (412/409). */
  conflicts: number;
  errors: number;
}

function bodyBytes(body: unknown): number {
  if (body === undefined || body === null) return 0;
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  if (body instanceof ArrayBuffer) return body.byteLength;
  return 0;
}

/** Counts the HTTP requests every attached S3 client sends, by command, with the object bytes both ways. */
export class WireMeter {
  counts: WireCounts = {
    requests: 0,
    byCommand: {},
    bytesOut: 0,
    bytesIn: 0,
    conflicts: 0,
    errors: 0,
  };

  attach(client: S3Client): S3Client {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const c = this.counts;
        const command = String(
          (context as { commandName?: string }).commandName ?? 'Unknown',
        ).replace(/Command$/, '');
        c.requests++;
        c.byCommand[command] = (c.byCommand[command] ?? 0) + 1;
        c.bytesOut += bodyBytes((args.input as { Body?: unknown }).Body);
        try {
          const out = await next(args);
          const len = (out.output as { ContentLength?: number }).ContentLength;
          if (command === 'GetObject' && typeof len === 'number') c.bytesIn += len;
          return out;
        } catch (err) {
          const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata
            ?.httpStatusCode;
          if (status === 412 || status === 409) c.conflicts++;
          else if (status !== 404) c.errors++;
          throw err;
        }
      },
      { step: 'initialize', name: 'peerWireMeter' },
    );
    return client;
  }

  /** Counts the requests a store sends over its wire (lib/storage/s3-node.ts) as the SDK's would be. */
  wrap(make: (t: S3WireTarget) => S3Wire): (t: S3WireTarget) => S3Wire {
    return (t) => {
      const wire = make(t);
      return async (req) => {
        const c = this.counts;
        const command = wireCommand(req);
        c.requests++;
        c.byCommand[command] = (c.byCommand[command] ?? 0) + 1;
        c.bytesOut += req.body?.byteLength ?? 0;
        const res = await wire(req).catch((err: unknown) => {
          c.errors++;
          throw err;
        });
        if (command === 'GetObject' && res.status === 200) c.bytesIn += res.body.byteLength;
        if (res.status === 412 || res.status === 409) c.conflicts++;
        else if (res.status >= 300 && res.status !== 404) c.errors++;
        return res;
      };
    };
  }

  snapshot(): WireCounts {
    return structuredClone(this.counts);
  }
}

export function diffCounts(a: WireCounts, b: WireCounts): WireCounts {
  const byCommand: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a.byCommand), ...Object.keys(b.byCommand)])) {
    const v = (b.byCommand[k] ?? 0) - (a.byCommand[k] ?? 0);
    if (v) byCommand[k] = v;
  }
  return {
    requests: b.requests - a.requests,
    byCommand,
    bytesOut: b.bytesOut - a.bytesOut,
    bytesIn: b.bytesIn - a.bytesIn,
    conflicts: b.conflicts - a.conflicts,
    errors: b.errors - a.errors,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The interface

/** One writer of a concurrency run: it already holds (or can reach) the session. */
export interface Writer {
  append(m: Msg): Promise<void>;
  close(): void;
}

export interface System {
  readonly name: SystemName;
  readonly meter: WireMeter;
  /** Starts a round: a fresh key prefix, fresh clients. */
  begin(round: number): Promise<void>;
  /** Creates a session holding `msgs`; the system's warm writer holds it afterwards. */
  create(id: string, msgs: Msg[]): Promise<void>;
  /** An append by the writer that already holds the session. */
  appendWarm(id: string, m: Msg): Promise<void>;
  /**
   * Prepares a writer that holds nothing (a fresh process: new store, no cache; the S3 connection pool is
   * shared, so this measures the store, not TCP or SDK start-up); the returned function is the timed append.
   */
  prepareStateless(id: string): Promise<(m: Msg) => Promise<void>>;
  /** Prepares a reader; the returned function is the timed load, resolving to the message count. */
  prepareLoad(id: string): Promise<() => Promise<number>>;
  /** A load by a process that holds nothing yet (Strands: its load always is). */
  prepareColdLoad(id: string): Promise<() => Promise<number>>;
  /** A writer of its own (own client, own store/agent), for the concurrency runs. */
  openWriter(id: string): Promise<Writer>;
  /** The stored messages' texts, read fresh. */
  readTexts(id: string): Promise<string[]>;
  /** Waits for background work (Satchel's log, audit, index records) so that the counts include it. */
  drain(): Promise<void>;
  /** Deletes the round's objects and closes its clients. */
  end(): Promise<void>;
}

export type SystemName = 'strands' | 'satchel' | 'satchel-http';

let prefixSeq = 0;
function newPrefix(label: string, round: number): string {
  return `peer-${label}-r${round}-${++prefixSeq}-${Math.random().toString(36).slice(2, 8)}/`;
}

/** Deletes everything under a prefix through the ObjectStore port (uncounted client). */
async function wipe(target: Target, prefix: string): Promise<void> {
  const client = newClient(target);
  try {
    const store = new S3Store({
      bucket: target.bucket,
      prefix,
      endpoint: target.endpoint,
      forcePathStyle: true,
      client,
    });
    let cursor: string | undefined;
    do {
      const page = await store.list('', cursor ? { cursor } : {});
      if (page.objects.length) await store.delete(page.objects.map((o) => o.key));
      cursor = page.cursor;
    } while (cursor);
  } finally {
    client.destroy();
  }
}

/** Background work of one process, tracked as the Node app tracks it (lib/server/background.ts). */
class Tracker {
  private readonly running = new Set<Promise<unknown>>();
  failures = 0;
  readonly schedule = (work: Promise<unknown>) => {
    const p = work.catch(() => void this.failures++);
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  };
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Strands

/**
 * Strands Agents' S3Storage as its SessionManager uses it: the session is the agent's snapshot
 * (`session/<id>/scopes/agent/agent/snapshots/snapshot_latest.json`, every message in it). With
 * `saveLatestOn: 'message'` each added message triggers `saveSnapshot({ target: agent, isLatest: true })`:
 * one unconditional PUT of the whole snapshot; an agent that starts restores it with one GET.
 * This drives exactly those two public methods on a real Agent (no model is called).
 */
export class StrandsSystem implements System {
  readonly name = 'strands' as const;
  readonly meter = new WireMeter();
  private prefix = '';
  private client: S3Client | undefined;
  private readonly clients: S3Client[] = [];
  private readonly warm = new Map<string, { agent: Agent; sm: SessionManager }>();

  constructor(private readonly target: Target) {}

  private newClient(): S3Client {
    const c = this.meter.attach(newClient(this.target));
    this.clients.push(c);
    return c;
  }

  async begin(round: number): Promise<void> {
    this.prefix = newPrefix('strands', round);
    this.client = this.newClient();
  }

  /** A fresh agent process's objects: storage, session manager, agent (empty until restored). */
  private open(id: string, client = this.client!): { agent: Agent; sm: SessionManager } {
    const storage = new StrandsS3Storage(this.target.bucket, {
      prefix: this.prefix,
      s3Client: client,
    });
    const sm = new SessionManager({ sessionId: id, storage, saveLatestOn: 'message' });
    // No model is ever called: the agent only holds messages and takes snapshots.
    const agent = new Agent({ model: { stateful: false } as never, printer: false });
    return { agent, sm };
  }

  private static toMessage(m: Msg): Message {
    return new Message({ role: m.role, content: [new TextBlock(m.text)] });
  }

  async create(id: string, msgs: Msg[]): Promise<void> {
    const w = this.open(id);
    for (const m of msgs) w.agent.messages.push(StrandsSystem.toMessage(m));
    await w.sm.saveSnapshot({ target: w.agent, isLatest: true });
    this.warm.set(id, w);
  }

  /** What the MessageAddedEvent hook does: the message joins agent.messages, then the snapshot is saved. */
  private static async add(w: { agent: Agent; sm: SessionManager }, m: Msg): Promise<void> {
    w.agent.messages.push(StrandsSystem.toMessage(m));
    await w.sm.saveSnapshot({ target: w.agent, isLatest: true });
  }

  async appendWarm(id: string, m: Msg): Promise<void> {
    await StrandsSystem.add(this.warm.get(id)!, m);
  }

  async prepareStateless(id: string) {
    const w = this.open(id);
    return async (m: Msg) => {
      // A new agent process restores the session first (InitializedEvent), then adds its message.
      if (!(await w.sm.restoreSnapshot({ target: w.agent })))
        throw new Error(`strands: ${id} not found`);
      await StrandsSystem.add(w, m);
    };
  }

  async prepareLoad(id: string) {
    const w = this.open(id);
    return async () => {
      if (!(await w.sm.restoreSnapshot({ target: w.agent })))
        throw new Error(`strands: ${id} not found`);
      return w.agent.messages.length;
    };
  }

  prepareColdLoad(id: string) {
    return this.prepareLoad(id);
  }

  async openWriter(id: string): Promise<Writer> {
    const client = this.newClient();
    const w = this.open(id, client);
    if (!(await w.sm.restoreSnapshot({ target: w.agent })))
      throw new Error(`strands: ${id} not found`);
    return { append: (m) => StrandsSystem.add(w, m), close: () => undefined };
  }

  async readTexts(id: string): Promise<string[]> {
    const w = this.open(id);
    if (!(await w.sm.restoreSnapshot({ target: w.agent })))
      throw new Error(`strands: ${id} not found`);
    return w.agent.messages.map((m) =>
      m.content.map((b) => ('text' in b ? String(b.text) : '')).join(''),
    );
  }

  async drain(): Promise<void> {}

  async end(): Promise<void> {
    this.warm.clear();
    for (const c of this.clients) c.destroy();
    this.clients.length = 0;
    await wipe(this.target, this.prefix);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Satchel in process

const NS = 'default';

let sendKeys = false;
/**
 * Satchel's appends carry an Idempotency-Key from now on, as Satchel's client and adapters send one with
 * every append (`bench:peer --keyed`, an experiment).
 */
export function withIdempotencyKeys(): void {
  sendKeys = true;
}
let sdkOnly = false;
/**
 * Satchel's object requests go through the SDK from now on, as on Workers, instead of `nodeWire` as in the
 * Node and Lambda entries (`bench:peer --sdk-only`, an experiment).
 */
export function withSdkOnly(): void {
  sdkOnly = true;
}
/** The S3Store option that sends Satchel's object requests as its Node entries do, counted. */
function satchelWire(meter: WireMeter): Pick<S3StoreOptions, 'wire'> {
  return sdkOnly ? {} : { wire: meter.wrap(nodeWire) };
}

/** A new Idempotency-Key for an append, when keys are on. */
function keyed(): { idempotencyKey?: string } {
  return sendKeys ? { idempotencyKey: crypto.randomUUID() } : {};
}
const TASK = 'Fix the flaky retry test in lib/storage/retry.ts';

/** A SessionStore over CountingStore(S3Store), with the production pipeline and audit log (bench/support.ts). */
export class SatchelSystem implements System {
  readonly name = 'satchel' as const;
  readonly meter = new WireMeter();
  /** Port-level counts (lib/storage/counting.ts), kept beside the wire counts. */
  counting: CountingStore | undefined;
  private prefix = '';
  private readonly clients: S3Client[] = [];
  private warmStore: SessionStore | undefined;
  private readonly bg = new Tracker();

  constructor(
    private readonly target: Target,
    /** Split and segment sizes other than the defaults (`bench:peer --split-bytes`, an experiment). */
    private readonly layout: Pick<SessionStoreOptions, 'splitBytes' | 'segmentBytes'> = {},
  ) {}

  private objects(client?: S3Client): ObjectStore {
    const c = client ?? this.meter.attach(newClient(this.target));
    if (!client) this.clients.push(c);
    return new S3Store({
      bucket: this.target.bucket,
      prefix: this.prefix,
      endpoint: this.target.endpoint,
      forcePathStyle: true,
      client: c,
      ...satchelWire(this.meter),
    });
  }

  async begin(round: number): Promise<void> {
    this.prefix = newPrefix('satchel', round);
    this.counting = new CountingStore(this.objects());
    this.warmStore = productionSessionStore(this.counting, this.layout);
  }

  get backgroundFailures(): number {
    return this.bg.failures;
  }

  async create(id: string, msgs: Msg[]): Promise<void> {
    await this.warmStore!.create(
      NS,
      { id, task: TASK, messages: msgs.map(toSatchel) },
      { schedule: this.bg.schedule },
    );
  }

  async appendWarm(id: string, m: Msg): Promise<void> {
    await this.warmStore!.append(NS, id, { messages: [toSatchel(m)] }, undefined, {
      schedule: this.bg.schedule,
      ...keyed(),
    });
  }

  async prepareStateless(id: string) {
    // A new process: a new SessionStore (empty caches) on the shared client and counter.
    const store = productionSessionStore(this.counting!, this.layout);
    return async (m: Msg) => {
      await store.append(NS, id, { messages: [toSatchel(m)] }, undefined, {
        schedule: this.bg.schedule,
        ...keyed(),
      });
    };
  }

  async prepareLoad(id: string) {
    const store = this.warmStore!;
    return async () => (await store.get(NS, id)).messages.length;
  }

  async prepareColdLoad(id: string) {
    const store = productionSessionStore(this.counting!, this.layout);
    return async () => (await store.get(NS, id)).messages.length;
  }

  async openWriter(id: string): Promise<Writer> {
    const store = productionSessionStore(new CountingStore(this.objects()), this.layout);
    return {
      append: async (m) => {
        await store.append(NS, id, { messages: [toSatchel(m)] }, undefined, {
          schedule: this.bg.schedule,
          ...keyed(),
        });
      },
      close: () => undefined,
    };
  }

  async readTexts(id: string): Promise<string[]> {
    const store = productionSessionStore(this.counting!, this.layout);
    return (await store.get(NS, id)).messages.map((m) => m.content);
  }

  drain(): Promise<void> {
    return this.bg.drain();
  }

  async end(): Promise<void> {
    await this.bg.drain();
    this.warmStore = undefined;
    for (const c of this.clients) c.destroy();
    this.clients.length = 0;
    await wipe(this.target, this.prefix);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Satchel through HTTP

type App = ReturnType<typeof createApp>;

/**
 * The real app (createApp, as functions/node.ts and test/support/satchel-server.ts build it: open local
 * mode, namespace `default`) on a loopback port, over S3Store with a counted client. The server holds one
 * app per round (the warm writer: its SessionStore caches the session); a stateless append swaps in a
 * brand-new app (new services, empty caches) before the timed request, as a fresh function instance.
 */
export class SatchelHttpSystem implements System {
  readonly name = 'satchel-http' as const;
  readonly meter = new WireMeter();
  private prefix = '';
  private config: SatchelConfig | undefined;
  private client: S3Client | undefined;
  private readonly clients: S3Client[] = [];
  private warmApp: App | undefined;
  private active: App | undefined;
  private readonly retired: App[] = [];
  private server: ServerType | undefined;
  private url = '';

  constructor(private readonly target: Target) {}

  async begin(round: number): Promise<void> {
    this.prefix = newPrefix('http', round);
    this.config ??= await loadConfig({}, 'local');
    this.client = this.meter.attach(newClient(this.target));
    this.clients.push(this.client);
    this.warmApp = this.newApp();
    this.active = this.warmApp;
    if (!this.server) {
      this.server = await new Promise<ServerType>((resolve) => {
        const s = serve(
          { fetch: (req) => this.active!.app.fetch(req), port: 0, hostname: '127.0.0.1' },
          () => resolve(s),
        );
      });
      this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    }
  }

  private newApp(): App {
    const objects = new S3Store({
      bucket: this.target.bucket,
      prefix: this.prefix,
      endpoint: this.target.endpoint,
      forcePathStyle: true,
      client: this.client!,
      ...satchelWire(this.meter),
    });
    return createApp({
      config: this.config!,
      objects,
      allowOpen: true,
      log: createLogger({ quiet: true }),
    });
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(this.url + path, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(path.endsWith('/messages') && sendKeys
          ? { 'idempotency-key': crypto.randomUUID() }
          : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // Read as Satchel's client reads an answer (lib/client: the bytes, then decodeBody).
    const text = decodeBody(new Uint8Array(await res.arrayBuffer()));
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  }

  async create(id: string, msgs: Msg[]): Promise<void> {
    this.active = this.warmApp;
    await this.call('POST', '/v1/sessions', { id, task: TASK, messages: msgs.map(toSatchel) });
  }

  async appendWarm(id: string, m: Msg): Promise<void> {
    this.active = this.warmApp;
    await this.call('POST', `/v1/sessions/${id}/messages`, { messages: [toSatchel(m)] });
  }

  async prepareStateless(id: string) {
    if (this.active !== this.warmApp) this.retired.push(this.active!);
    this.active = this.newApp();
    return async (m: Msg) => {
      await this.call('POST', `/v1/sessions/${id}/messages`, { messages: [toSatchel(m)] });
    };
  }

  async prepareColdLoad(id: string) {
    if (this.active !== this.warmApp) this.retired.push(this.active!);
    this.active = this.newApp();
    return async () =>
      ((await this.call('GET', `/v1/sessions/${id}`)) as { messages: unknown[] }).messages.length;
  }

  async prepareLoad(id: string) {
    this.active = this.warmApp;
    return async () =>
      ((await this.call('GET', `/v1/sessions/${id}`)) as { messages: unknown[] }).messages.length;
  }

  async openWriter(id: string): Promise<Writer> {
    // An HTTP client holds nothing; the server (the warm app) is shared by the writers, as in production.
    this.active = this.warmApp;
    return {
      append: async (m) => {
        await this.call('POST', `/v1/sessions/${id}/messages`, { messages: [toSatchel(m)] });
      },
      close: () => undefined,
    };
  }

  async readTexts(id: string): Promise<string[]> {
    this.active = this.warmApp;
    const s = (await this.call('GET', `/v1/sessions/${id}`)) as {
      messages: { content: unknown }[];
    };
    return s.messages.map((m) =>
      typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
    );
  }

  async drain(): Promise<void> {
    const apps = [this.warmApp, this.active, ...this.retired].filter((a): a is App => !!a);
    await Promise.all(apps.map((a) => a.background.drain()));
    this.retired.length = 0;
  }

  async end(): Promise<void> {
    await this.drain();
    this.warmApp = this.active = undefined;
    for (const c of this.clients) c.destroy();
    this.clients.length = 0;
    await wipe(this.target, this.prefix);
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    await new Promise<void>((resolve) => {
      (s as { closeAllConnections?: () => void }).closeAllConnections?.();
      s.close(() => resolve());
    });
  }
}
