/**
 * Helpers for bench/run.ts: the storage stack under test, request counting on the wire, percentiles,
 * realistic session content and table printing. Nothing here is imported by lib/ or the tests.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../lib/server/config.js';
import { defaultPipeline } from '../lib/pipeline/default.js';
import type { SavePipeline } from '../lib/pipeline/save.js';
import { AuditLog } from '../lib/sessions/audit.js';
import { CountingStore, type StoreCounts } from '../lib/storage/counting.js';
import type { ObjectStore } from '../lib/storage/port.js';
import { S3Store, type S3Wire, type S3WireRequest, type S3WireTarget } from '../lib/storage/s3.js';
import { nodeWire } from '../lib/storage/s3-node.js';
import { SessionStore, type SessionStoreOptions } from '../lib/sessions/store.js';
import type { Message } from '../lib/model/session.js';

// ---------------------------------------------------------------------------------------------------------
// Production wiring

/** What the session stores are built with: the save pipeline and audit log of lib/http/app.ts. */
export interface Production {
  pipeline: SavePipeline;
  maxSessionBytes: number;
  knownValues: number;
  /** Audit records that could not be stored (SessionStore's onError); the write itself still succeeded. */
  auditErrors: number;
}

let production: Production | undefined;

/**
 * Builds the production pipeline once, as lib/http/app.ts does: `defaultPipeline` with the config's
 * SATCHEL_MAX_SESSION_BYTES and SATCHEL_REDACT_VALUES (their defaults when unset: 32 MiB, none). One pipeline
 * is shared by every SessionStore of the run, as one app shares it across requests.
 */
export async function setUpProduction(
  env: Record<string, string | undefined> = process.env,
): Promise<Production> {
  const config = await loadConfig(
    {
      SATCHEL_STORAGE: 'local',
      SATCHEL_MAX_SESSION_BYTES: env.SATCHEL_MAX_SESSION_BYTES,
      SATCHEL_REDACT_VALUES: env.SATCHEL_REDACT_VALUES,
    },
    'local',
  );
  production = {
    pipeline: defaultPipeline({
      maxSessionBytes: config.maxSessionBytes,
      knownValues: config.redactValues,
    }),
    maxSessionBytes: config.maxSessionBytes,
    knownValues: config.redactValues.length,
    auditErrors: 0,
  };
  return production;
}

/**
 * `new SessionStore(objects, { pipeline, audit: new AuditLog(objects, pipeline.redactText), onError })`, as
 * the app builds it; `layout` (split and segment sizes) only for an experiment that says so.
 */
export function productionSessionStore(
  objects: ObjectStore,
  layout: Pick<SessionStoreOptions, 'splitBytes' | 'segmentBytes'> = {},
): SessionStore {
  const p = production;
  if (!p) throw new Error('call setUpProduction() first');
  return new SessionStore(objects, {
    pipeline: p.pipeline,
    audit: new AuditLog(objects, p.pipeline.redactText),
    onError: (what, err) => {
      if (p.auditErrors++ < 5) console.warn(`[bench] ${what}: ${(err as Error).message}`);
    },
    ...layout,
  });
}

// ---------------------------------------------------------------------------------------------------------
// Target and stacks

export interface Target {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Counts the HTTP requests actually sent by an S3 client (one per `send`, since the adapter sets
 * maxAttempts: 1 and retries itself), by command, key class and outcome. This is below S3Store, so it also
 * sees what CountingStore cannot: adapter retries, multipart parts, and the class of every GET.
 */
export class WireCounter {
  counts = new Map<string, number>();
  /** Conditional writes answered 412/409 (lost compare-and-swap races). */
  conflicts = 0;
  errors = 0;

  constructor(private readonly prefixOf: () => string) {}

  attach(client: S3Client): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: string; Prefix?: string };
        const command = String(
          (context as { commandName?: string }).commandName ?? 'Unknown',
        ).replace(/Command$/, '');
        const raw = input.Key ?? input.Prefix ?? '';
        const kind = command === 'DeleteObjects' ? 'batch' : kindOfKey(raw, this.prefixOf());
        const label = `${command} ${kind}`;
        this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
        try {
          return await next(args);
        } catch (err) {
          const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata
            ?.httpStatusCode;
          if (status === 412 || status === 409) this.conflicts++;
          else if (status !== 404) this.errors++;
          throw err;
        }
      },
      { step: 'initialize', name: 'benchWireCounter' },
    );
  }

  /** Counts the requests a store sends over its wire (lib/storage/s3-node.ts) the same way. */
  wrap(make: (t: S3WireTarget) => S3Wire): (t: S3WireTarget) => S3Wire {
    return (t) => {
      const wire = make(t);
      return async (req) => {
        const command = wireCommand(req);
        const label = `${command} ${kindOfKey(req.query?.prefix ?? req.key, this.prefixOf())}`;
        this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
        const res = await wire(req).catch((err: unknown) => {
          this.errors++;
          throw err;
        });
        if (res.status === 412 || res.status === 409) this.conflicts++;
        else if (res.status >= 300 && res.status !== 404) this.errors++;
        return res;
      };
    };
  }

  snapshot(): WireSnapshot {
    return {
      counts: Object.fromEntries(this.counts),
      conflicts: this.conflicts,
      errors: this.errors,
    };
  }
}

export interface WireSnapshot {
  counts: Record<string, number>;
  conflicts: number;
  errors: number;
}

/** The SDK command a wire request stands for, so that both paths are counted under one name. */
export function wireCommand(req: S3WireRequest): string {
  if (req.query?.['list-type']) return 'ListObjectsV2';
  return { GET: 'GetObject', HEAD: 'HeadObject', PUT: 'PutObject', DELETE: 'DeleteObject' }[
    req.method
  ];
}

/** Key class as CountingStore names it (`sessions`, `m/l`, `m/p`, `m/b`, `m` for the manifest prefix). */
function kindOfKey(full: string, prefix: string): string {
  const key = full.startsWith(prefix) ? full.slice(prefix.length) : full;
  const parts = key.split('/');
  if (parts[0] !== 'ns' || parts.length < 3) return 'other';
  if (parts[2] === 'm') return parts[3] ? `m/${parts[3]}` : 'm';
  return parts[2] || 'other';
}

export function newClient(t: Target): S3Client {
  return new S3Client({
    region: t.region,
    endpoint: t.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: t.accessKeyId, secretAccessKey: t.secretAccessKey },
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** A prefix (bucket folder) with one wire counter shared by every client used on it. */
export class Prefix {
  readonly prefix: string;
  readonly wire: WireCounter;
  private readonly shared: S3Client;
  private readonly own: S3Client[] = [];

  constructor(
    private readonly target: Target,
    label: string,
  ) {
    this.prefix = `bench-${label}-${Math.random().toString(36).slice(2, 10)}/`;
    this.wire = new WireCounter(() => this.prefix);
    this.shared = this.client();
  }

  /** A new S3 client on this prefix, counted on the wire. */
  client(): S3Client {
    const c = newClient(this.target);
    this.wire.attach(c);
    this.own.push(c);
    return c;
  }

  /**
   * `new SessionStore(new CountingStore(new S3Store(...)), ...)` with the pipeline and audit log of
   * lib/http/app.ts (the AuditLog writes through the same CountingStore, so audit PUTs are counted, as key
   * class `audit`). By default the S3 client (its connection pool) is shared by the prefix's stacks, so that
   * "cold" measures Satchel's caches, not TCP or SDK start-up; `freshClient` gives the stack its own client
   * too (a brand-new process).
   */
  stack(freshClient = false): Stack {
    const client = freshClient ? this.client() : this.shared;
    const counting = new CountingStore(
      new S3Store({
        bucket: this.target.bucket,
        prefix: this.prefix,
        endpoint: this.target.endpoint,
        forcePathStyle: true,
        client,
        wire: this.wire.wrap(nodeWire),
      }),
    );
    return { sessions: productionSessionStore(counting), counting, client };
  }

  /** Drops a client made by stack(true) once it is no longer used. */
  release(client: S3Client): void {
    if (client === this.shared) return;
    const i = this.own.indexOf(client);
    if (i >= 0) this.own.splice(i, 1);
    client.destroy();
  }

  destroy(): void {
    for (const c of this.own) c.destroy();
    this.own.length = 0;
  }
}

export interface Stack {
  sessions: SessionStore;
  counting: CountingStore;
  client: S3Client;
}

// ---------------------------------------------------------------------------------------------------------
// Counting snapshots

export interface Snapshot {
  store: StoreCounts;
  wire: WireSnapshot;
}

export function snap(counting: CountingStore, wire: WireCounter): Snapshot {
  return { store: structuredClone(counting.counts), wire: wire.snapshot() };
}

/** Request and byte totals between two snapshots (or accumulated from several intervals). */
export interface Tally extends StoreCounts {
  wire: Record<string, number>;
  conflicts: number;
  wireErrors: number;
}

export function emptyTally(): Tally {
  return {
    get: 0,
    put: 0,
    delete: 0,
    list: 0,
    head: 0,
    bytesRead: 0,
    bytesWritten: 0,
    writtenByKind: {},
    putsByKind: {},
    getsByKind: {},
    wire: {},
    conflicts: 0,
    wireErrors: 0,
  };
}

function addMap(
  into: Record<string, number>,
  a: Record<string, number>,
  b: Record<string, number> | undefined,
  sign: number,
) {
  for (const k of new Set([...Object.keys(a), ...Object.keys(b ?? {})])) {
    const v = (a[k] ?? 0) - (b?.[k] ?? 0);
    if (v !== 0) into[k] = (into[k] ?? 0) + sign * v;
  }
}

/** Adds (to - from) to `into`. */
export function accumulate(into: Tally, from: Snapshot, to: Snapshot): Tally {
  into.get += to.store.get - from.store.get;
  into.put += to.store.put - from.store.put;
  into.delete += to.store.delete - from.store.delete;
  into.list += to.store.list - from.store.list;
  into.head += to.store.head - from.store.head;
  into.bytesRead += to.store.bytesRead - from.store.bytesRead;
  into.bytesWritten += to.store.bytesWritten - from.store.bytesWritten;
  addMap(into.writtenByKind, to.store.writtenByKind, from.store.writtenByKind, 1);
  addMap(into.putsByKind, to.store.putsByKind, from.store.putsByKind, 1);
  addMap(into.getsByKind, to.store.getsByKind, from.store.getsByKind, 1);
  addMap(into.wire, to.wire.counts, from.wire.counts, 1);
  into.conflicts += to.wire.conflicts - from.wire.conflicts;
  into.wireErrors += to.wire.errors - from.wire.errors;
  return into;
}

/** Moves one LIST of the manifest (a compaction's first request) from one tally to another. */
export function moveOneManifestList(from: Tally, to: Tally): void {
  from.list--;
  to.list++;
  from.wire['ListObjectsV2 m'] = (from.wire['ListObjectsV2 m'] ?? 0) - 1;
  to.wire['ListObjectsV2 m'] = (to.wire['ListObjectsV2 m'] ?? 0) + 1;
}

export function addTallies(...ts: Tally[]): Tally {
  const out = emptyTally();
  for (const t of ts) {
    out.get += t.get;
    out.put += t.put;
    out.delete += t.delete;
    out.list += t.list;
    out.head += t.head;
    out.bytesRead += t.bytesRead;
    out.bytesWritten += t.bytesWritten;
    addMap(out.writtenByKind, t.writtenByKind, undefined, 1);
    addMap(out.putsByKind, t.putsByKind, undefined, 1);
    addMap(out.getsByKind, t.getsByKind, undefined, 1);
    addMap(out.wire, t.wire, undefined, 1);
    out.conflicts += t.conflicts;
    out.wireErrors += t.wireErrors;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Figures

/** A figure with its unit, as written to results.json. */
export interface Q {
  value: number;
  unit: string;
}

export function q(value: number, unit: string, digits = 3): Q {
  const f = 10 ** digits;
  return { value: Math.round(value * f) / f, unit };
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = samples.slice().sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

export interface Latency {
  samples: number;
  p50: Q;
  p99: Q;
  mean: Q;
  max: Q;
}

export function latency(ms: number[]): Latency {
  const mean = ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length);
  return {
    samples: ms.length,
    p50: q(percentile(ms, 50), 'ms', 2),
    p99: q(percentile(ms, 99), 'ms', 2),
    mean: q(mean, 'ms', 2),
    max: q(Math.max(...ms), 'ms', 2),
  };
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

export function fmtBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const a = Math.abs(n);
  if (a >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(2)} GiB`;
  if (a >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(2)} MiB`;
  if (a >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${Math.round(n)} B`;
}

export function fmtNum(n: number, digits = 2): string {
  if (!Number.isFinite(n)) return String(n);
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

/** Prints a plain-text table. */
export function table(title: string, head: string[], rows: (string | number)[][]): void {
  const cells = [head, ...rows.map((r) => r.map(String))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}`);
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) console.log(line(r));
}

// ---------------------------------------------------------------------------------------------------------
// Content

const TASKS = [
  'Fix the flaky retry test in lib/storage/retry.ts',
  'Add pagination to the invoices endpoint and update the OpenAPI spec',
  'Investigate why the nightly export job runs out of memory on large tenants',
  'Migrate the settings page from class components to hooks',
  'Write a migration that backfills created_by on old audit rows',
  'Summarise the last 50 support tickets tagged "billing" and draft replies',
  'Upgrade the CI image to Node 20 and fix the broken snapshot tests',
  'Refactor the payment webhook handler so retries are idempotent',
  'Find the N+1 query on the dashboard and add the missing index',
  'Translate the onboarding emails into German and French',
  'Review PR #482 (rate limiter) and leave comments on edge cases',
  'Bisect the regression that made cold starts 300 ms slower',
  'Add structured logging to the worker and drop the console.log calls',
  'Port the CSV importer to streaming so 2 GB files do not load into memory',
  'Draft a design note for per-tenant encryption keys',
  'Clean up feature flags that have been at 100% for over 90 days',
];

const SYSTEM_PROMPT =
  "You are a careful senior software engineer working in the user's repository through a sandboxed shell. " +
  'Read the relevant files before changing them, keep changes small and focused, run the test suite after ' +
  'each change, and explain what you did and why in a short summary at the end. Never push to the default ' +
  'branch, never print secrets from the environment, and ask before running commands that delete data or ' +
  "touch production systems. Prefer the project's existing conventions over your own preferences. When a " +
  'test fails, read its output fully before guessing at a fix.';

const FILLER =
  'The function reads the configuration once at start-up, validates it with the schema, and passes the ' +
  'result down explicitly instead of reading environment variables deep inside the call graph. Errors are ' +
  'mapped to problem details at the edge so that handlers stay small. ';

export function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)]!;
}

export function taskString(i: number): string {
  return `${pick(TASKS)} (ticket ${1000 + (i % 9000)})`;
}

/** A new session's first messages: a system prompt and a user request, about 1 KB together. */
export function firstMessages(task: string): Message[] {
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    {
      role: 'user',
      content: `${task}. The repository is checked out in /workspace; start by reading the README and the failing test output.`,
    },
  ];
}

/** A ~200-byte user message with a unique marker. */
export function shortUserMessage(marker: string): Message {
  const base = `[${marker}] Thanks. Now run the whole test suite again and tell me which tests still fail, with the first error of each.`;
  return { role: 'user', content: base.padEnd(200, ' .') };
}

/** A realistic conversation of about `bytes` bytes of content: user / assistant tool call / tool result turns. */
export function conversation(bytes: number): Message[] {
  const out: Message[] = [{ role: 'system', content: SYSTEM_PROMPT }];
  let size = SYSTEM_PROMPT.length;
  let turn = 0;
  while (size < bytes) {
    turn++;
    const callId = `call_${turn.toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    const user = `Step ${turn}: ${pick(TASKS)}.`;
    const args = JSON.stringify({ cmd: `grep -rn "retry" lib/ | head -n ${turn % 50}` });
    const result = `${FILLER.repeat(1 + (turn % 8))}exit status 0`;
    const answer = `I looked at the output of step ${turn}. ${FILLER.repeat(1 + (turn % 3))}`;
    out.push(
      { role: 'user', content: user },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: callId, type: 'function', function: { name: 'shell', arguments: args } },
        ],
      },
      { role: 'tool', content: result, tool_call_id: callId },
      { role: 'assistant', content: answer },
    );
    size += user.length + args.length + result.length + answer.length + 200;
  }
  return out;
}

export const MODELS = [
  { model: 'claude-sonnet-4-5', provider: 'anthropic' },
  { model: 'gpt-4.1', provider: 'openai' },
  { model: 'qwen3-coder-30b', provider: 'local' },
] as const;

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
