/**
 * Satchel benchmark against a private Ceph radosgw started (and stopped) by this script.
 *
 *   npm run bench               full run: 1,000 and 10,000 sessions (~6-9 min on 2 cores); writes bench/results.json
 *   npm run bench -- --quick    smoke run: 200 and 1,000 sessions, fewer operations (~2 min); writes
 *                               bench/results.quick.json so that it never overwrites a full run's results
 *
 * First, section P (bench/pipeline.ts, CPU only, before radosgw starts): redaction throughput, save-pipeline
 * CPU, SessionStore.append CPU on a 30 MB session; its figures go to results.json under `pipeline`.
 *
 * Every operation goes through `new SessionStore(new CountingStore(new S3Store(...)), options)`, namespace
 * "bench", with the production options of lib/http/app.ts: `defaultPipeline(...)` (redaction, taint, size
 * cap) and `new AuditLog(objects, pipeline.redactText)` over the same CountingStore, so every write's audit
 * record is counted too (key class `audit`: one create-only PUT per write, shown in its own columns).
 * Requests are counted twice: by CountingStore (calls on the port) and on the wire by an S3 client
 * middleware (HTTP requests, by key class; see bench/support.ts).
 *
 * Datasets: for each N (1,000 and 10,000) one fresh random prefix is populated with N sessions (system +
 * user message, ~1 KB; 16 creates in parallel; a list every 250 creates, as a client would, so the manifest
 * is compacted along the way) and is then used by scenarios 3, 1 and 1b in that order. Populating 10,000
 * sessions twice does not fit the time budget; scenario 3 only reads (plus 63 appends it compacts away).
 * Scenarios 2 and 4 each use their own fresh prefix.
 *
 *  3. list(20) and latest latency at N: warm (one SessionStore, repeated), cold (a new SessionStore per call,
 *     sharing the S3 client), cold with a new S3 client too, and cold/warm with 63 log records not yet
 *     compacted (the most a reader ever applies, compactAfter being 64).
 *  1. Storage requests and bytes per create / append / get / list(20) at N. A fresh SessionStore (cold
 *     caches) does 200 creates, 1,000 appends on random sessions, 200 gets, 200 lists, one at a time.
 *     During the creates and appends it lists (20) every 50 writes, as a client mix would, collecting the
 *     background compactions those lists schedule; they are awaited and charged to the writes that caused
 *     them. The lists' own requests are in a separate "list (during writes)" bucket.
 *  1b. The same 1,000 appends with 8 writers at once (8 SessionStores) and a list every 50 appends: shows
 *     what writes in flight do to compaction (not in the brief; everything is charged to the appends).
 *  2. Append latency for sessions of ~10 KB, 1 MB, 10 MB: 50 sequential appends of a ~200-byte message with
 *     a warm cache (one SessionStore) and 50 cold (a new SessionStore per append).
 *  4. Messages per second with 8 devices (8 SessionStores, 8 S3 clients) appending 50 times each without
 *     If-Match: all on one session, then each on its own session; then every message is counted.
 *
 * The targets are printed as PASS/FAIL but never change the exit code; only errors do.
 */
import { writeSections } from './results.js';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mapLimit } from '../lib/storage/concurrency.js';
import { startRadosgw, type S3Target } from '../test/support/radosgw.js';
import { runPipelineBench, type PipelineCheck } from './pipeline.js';
import {
  accumulate,
  addTallies,
  conversation,
  emptyTally,
  firstMessages,
  fmtBytes,
  fmtNum,
  latency,
  MODELS,
  moveOneManifestList,
  pick,
  Prefix,
  q,
  setUpProduction,
  shortUserMessage,
  snap,
  table,
  taskString,
  timed,
  type Latency,
  type Q,
  type Stack,
  type Tally,
  type Target,
} from './support.js';

const QUICK = process.argv.includes('--quick');
const NS = 'bench';
const CFG = QUICK
  ? {
      sizes: [200, 1000],
      creates: 50,
      appends: 200,
      gets: 50,
      lists: 50,
      listEvery: 50,
      populateListEvery: 250,
      lat: { warm: 50, cold: 20, coldClient: 10 },
      sizeAppends: 10,
      devices: 8,
      perDevice: 10,
    }
  : {
      sizes: [1000, 10000],
      creates: 200,
      appends: 1000,
      gets: 200,
      lists: 200,
      listEvery: 50,
      populateListEvery: 250,
      lat: { warm: 200, cold: 50, coldClient: 20 },
      sizeAppends: 50,
      devices: 8,
      perDevice: 50,
    };
const POPULATE_CONCURRENCY = 16;
/** The manifest's default compactAfter is 64: 63 uncovered records is the most a reader ever applies. */
const MAX_UNCOVERED = 63;
const SESSION_SIZES = [
  { label: '10 KB', bytes: 10 * 1024 },
  { label: '1 MB', bytes: 1024 * 1024 },
  { label: '10 MB', bytes: 10 * 1024 * 1024 },
];
const TARGET = { otherRequestsPerAppend: 3, bytesBeyondSessionPerAppend: 64 * 1024, listP50Ms: 50 };

const here = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(here, QUICK ? 'results.quick.json' : 'results.json');

function log(line: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
}

// ---------------------------------------------------------------------------------------------------------
// Populate

interface Dataset {
  prefix: Prefix;
  ids: string[];
  populate: {
    sessions: number;
    seconds: Q;
    createsPerSecond: Q;
    concurrency: number;
    compactions: number;
    baseBytes: Q;
    manifestEntries: number;
    wireRequests: Record<string, number>;
  };
}

/**
 * Creates n sessions (16 in parallel), listing every 250 creates (so the manifest is compacted as it would
 * be in use), then forces a compaction (every dataset starts from a fresh base) and checks the manifest.
 */
async function populate(target: Target, label: string, n: number): Promise<Dataset> {
  const prefix = new Prefix(target, label);
  const st = prefix.stack();
  const ids = new Array<string>(n);
  const jobs: Promise<unknown>[] = [];
  let done = 0;
  const before = snap(st.counting, prefix.wire);
  const t0 = performance.now();
  let lastReport = t0;
  await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    POPULATE_CONCURRENCY,
    async (i) => {
      const task = taskString(i);
      const m = pick(MODELS);
      const r = await st.sessions.create(NS, {
        task,
        model: m.model,
        provider: m.provider,
        messages: firstMessages(task),
      });
      ids[i] = r.session.id;
      done++;
      if (done % CFG.populateListEvery === 0)
        await st.sessions.list(NS, { limit: 20 }, { schedule: (w) => void jobs.push(w) });
      if (performance.now() - lastReport > 15_000) {
        lastReport = performance.now();
        log(`  populate ${label}: ${done}/${n} after ${((lastReport - t0) / 1000).toFixed(0)} s`);
      }
    },
  );
  await Promise.all(jobs);
  await st.sessions.manifest.compact(NS, true);
  const seconds = (performance.now() - t0) / 1000;
  const view = await st.sessions.manifest.view(NS);
  if (view.entries.length !== n)
    throw new Error(
      `populate ${label}: the manifest lists ${view.entries.length} sessions, expected ${n}`,
    );
  const tally = accumulate(emptyTally(), before, snap(st.counting, prefix.wire));
  const compactions = tally.wire['PutObject m/r'] ?? 0;
  const lastBase = await newestBaseBytes(st);
  log(
    `  populated ${n} sessions in ${seconds.toFixed(1)} s (${(n / seconds).toFixed(0)} creates/s, ${compactions} compactions, manifest pages now ${fmtBytes(lastBase)})`,
  );
  return {
    prefix,
    ids,
    populate: {
      sessions: n,
      seconds: q(seconds, 's', 1),
      createsPerSecond: q(n / seconds, 'creates/s', 1),
      concurrency: POPULATE_CONCURRENCY,
      compactions,
      baseBytes: q(lastBase, 'bytes', 0),
      manifestEntries: view.entries.length,
      wireRequests: tally.wire,
    },
  };
}

/** Bytes of all manifest pages of the namespace (one LIST, outside any measurement). */
async function newestBaseBytes(st: Stack): Promise<number> {
  let total = 0;
  let cursor: string | undefined;
  do {
    const page = await st.counting.list(`ns/${NS}/m/g/`, cursor ? { cursor } : {});
    for (const o of page.objects) total += o.size;
    cursor = page.cursor;
  } while (cursor);
  return total;
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 1: requests and bytes per operation

interface PerOp {
  operations: number;
  requests: { get: Q; put: Q; delete: Q; list: Q; head: Q; total: Q };
  httpRequests: Q;
  httpByKind: Record<string, Q>;
  bytesWritten: Q;
  bytesWrittenBeyondSession: Q;
  /** The audit record of each write (key class `audit`); part of the PUTs and bytes above. */
  auditPuts: Q;
  auditBytes: Q;
  bytesRead: Q;
}

function perOp(t: Tally, ops: number): PerOp {
  const d = Math.max(1, ops);
  const http = Object.values(t.wire).reduce((a, b) => a + b, 0);
  const r = (v: number) => q(v / d, 'requests/op');
  return {
    operations: ops,
    requests: {
      get: r(t.get),
      put: r(t.put),
      delete: r(t.delete),
      list: r(t.list),
      head: r(t.head),
      total: r(t.get + t.put + t.delete + t.list + t.head),
    },
    httpRequests: r(http),
    httpByKind: Object.fromEntries(
      Object.entries(t.wire)
        .filter(([, v]) => v !== 0)
        .sort()
        .map(([k, v]) => [k, r(v)]),
    ),
    bytesWritten: q(t.bytesWritten / d, 'bytes/op', 1),
    bytesWrittenBeyondSession: q(
      (t.bytesWritten - (t.writtenByKind['sessions'] ?? 0)) / d,
      'bytes/op',
      1,
    ),
    auditPuts: r(t.putsByKind['audit'] ?? 0),
    auditBytes: q((t.writtenByKind['audit'] ?? 0) / d, 'bytes/op', 1),
    bytesRead: q(t.bytesRead / d, 'bytes/op', 1),
  };
}

interface OpCosts {
  sessions: number;
  prefix: string;
  attribution: string;
  ops: Record<string, PerOp>;
  compactions: { duringCreates: number; duringAppends: number; baseBytesAtEnd: Q };
  append: {
    distinctSessionsTouched: number;
    sessionGets: number;
    sessionPuts: number;
    conflicts: number;
    otherRequestsPerAppend: Q;
    /** Of otherRequestsPerAppend: the audit record's PUT. */
    auditPutsPerAppend: Q;
    otherRequestsPerAppendWithoutAudit: Q;
    bytesBeyondSessionPerAppend: Q;
    auditBytesPerAppend: Q;
    manifestBaseBytesPerAppend: Q;
  };
  seconds: Q;
}

async function opCosts(ds: Dataset): Promise<OpCosts> {
  const n = ds.ids.length;
  const { prefix } = ds;
  const M = prefix.stack(); // a fresh SessionStore: nothing cached
  const t0 = performance.now();
  const b = {
    create: emptyTally(),
    createBackground: emptyTally(),
    append: emptyTally(),
    appendBackground: emptyTally(),
    listDuringWrites: emptyTally(),
    get: emptyTally(),
    list: emptyTally(),
  };
  let listsDuringWrites = 0;
  const compactions = { duringCreates: 0, duringAppends: 0 };
  const now = () => snap(M.counting, prefix.wire);
  const measure = async (into: Tally, fn: () => Promise<unknown>) => {
    const s0 = now();
    await fn();
    accumulate(into, s0, now());
  };
  /**
   * A list of 20 with a collecting scheduler. Its own requests go to listDuringWrites; the compaction it
   * schedules (awaited here) goes to `background`. Manifest.compact() issues its first request (a LIST of
   * m/) synchronously when it is scheduled, i.e. before the list returns: that one LIST is moved over.
   */
  const interleavedList = async (background: Tally, phase: 'duringCreates' | 'duringAppends') => {
    const jobs: Promise<unknown>[] = [];
    const s0 = now();
    await M.sessions.list(NS, { limit: 20 }, { schedule: (w) => void jobs.push(w) });
    const s1 = now();
    await Promise.all(jobs);
    const s2 = now();
    const own = accumulate(emptyTally(), s0, s1);
    const bg = accumulate(emptyTally(), s1, s2);
    if (jobs.length > 0) {
      if ((own.wire['ListObjectsV2 m'] ?? 0) < 2)
        log(
          `  warning: a scheduled compaction did not LIST synchronously; its LIST stays with the list`,
        );
      else moveOneManifestList(own, bg);
      compactions[phase] += jobs.length;
    }
    listsDuringWrites++;
    Object.assign(b.listDuringWrites, addTallies(b.listDuringWrites, own));
    Object.assign(background, addTallies(background, bg));
  };

  for (let i = 0; i < CFG.creates; i++) {
    const task = taskString(i);
    const m = pick(MODELS);
    await measure(b.create, () =>
      M.sessions.create(NS, {
        task,
        model: m.model,
        provider: m.provider,
        messages: firstMessages(task),
      }),
    );
    if ((i + 1) % CFG.listEvery === 0) await interleavedList(b.createBackground, 'duringCreates');
  }
  const touched = new Set<string>();
  for (let i = 0; i < CFG.appends; i++) {
    const id = pick(ds.ids);
    touched.add(id);
    await measure(b.append, () =>
      M.sessions.append(NS, id, { messages: [shortUserMessage(`a${i}`)] }, undefined),
    );
    if ((i + 1) % CFG.listEvery === 0) await interleavedList(b.appendBackground, 'duringAppends');
  }
  for (let i = 0; i < CFG.gets; i++) await measure(b.get, () => M.sessions.get(NS, pick(ds.ids)));
  for (let i = 0; i < CFG.lists; i++) {
    await measure(b.list, async () => {
      const jobs: Promise<unknown>[] = [];
      await M.sessions.list(NS, { limit: 20 }, { schedule: (w) => void jobs.push(w) });
      await Promise.all(jobs);
    });
  }
  const appendAll = addTallies(b.append, b.appendBackground);
  const createAll = addTallies(b.create, b.createBackground);
  const httpTotal = Object.values(appendAll.wire).reduce((a, c) => a + c, 0);
  const sessionGets = appendAll.wire['GetObject sessions'] ?? 0;
  const sessionPuts = appendAll.wire['PutObject sessions'] ?? 0;
  const auditPuts = appendAll.wire['PutObject audit'] ?? 0;
  const baseBytesAtEnd = await newestBaseBytes(M);
  const out: OpCosts = {
    sessions: n,
    prefix: prefix.prefix,
    attribution:
      'create and append include the background compactions scheduled by the lists done every ' +
      `${CFG.listEvery} writes (awaited before counting); those lists' own requests are in "list (during writes)"`,
    ops: {
      create: perOp(createAll, CFG.creates),
      'append (own requests)': perOp(b.append, CFG.appends),
      'append (background compaction, amortised)': perOp(b.appendBackground, CFG.appends),
      append: perOp(appendAll, CFG.appends),
      'list (during writes)': perOp(b.listDuringWrites, listsDuringWrites),
      get: perOp(b.get, CFG.gets),
      list: perOp(b.list, CFG.lists),
    },
    compactions: { ...compactions, baseBytesAtEnd: q(baseBytesAtEnd, 'bytes', 0) },
    append: {
      distinctSessionsTouched: touched.size,
      sessionGets,
      sessionPuts,
      conflicts: appendAll.conflicts,
      otherRequestsPerAppend: q(
        (httpTotal - sessionGets - sessionPuts) / CFG.appends,
        'requests/append',
      ),
      auditPutsPerAppend: q(auditPuts / CFG.appends, 'requests/append'),
      otherRequestsPerAppendWithoutAudit: q(
        (httpTotal - sessionGets - sessionPuts - auditPuts) / CFG.appends,
        'requests/append',
      ),
      bytesBeyondSessionPerAppend: q(
        (appendAll.bytesWritten - (appendAll.writtenByKind['sessions'] ?? 0)) / CFG.appends,
        'bytes/append',
        1,
      ),
      auditBytesPerAppend: q(
        (appendAll.writtenByKind['audit'] ?? 0) / CFG.appends,
        'bytes/append',
        1,
      ),
      manifestBaseBytesPerAppend: q(
        ((appendAll.writtenByKind['m/g'] ?? 0) + (appendAll.writtenByKind['m/r'] ?? 0)) /
          CFG.appends,
        'bytes/append',
        1,
      ),
    },
    seconds: q((performance.now() - t0) / 1000, 's', 1),
  };
  log(`  op costs at ${n} sessions measured in ${out.seconds.value} s`);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 1b: the same append mix with 8 writers at once (not required by the brief; it shows how the
// manifest behaves when writes are in flight while a reader lists, i.e. the "late record" path)

interface ConcurrentMix {
  sessions: number;
  writers: number;
  appends: number;
  listEvery: number;
  lists: number;
  seconds: Q;
  compactions: number;
  perAppend: PerOp;
  manifestBaseBytesPerAppend: Q;
  bytesBeyondSessionPerAppend: Q;
  sessionGets: number;
  sessionGetsByAppends: number;
  verificationGetsEstimate: number;
  conflicts: number;
  note: string;
}

async function concurrentMix(ds: Dataset): Promise<ConcurrentMix> {
  const { prefix, ids } = ds;
  const writers = Array.from({ length: CFG.devices }, () => prefix.stack(true));
  const jobs: Promise<unknown>[] = [];
  const firstTouches = writers.map(() => new Set<string>());
  let started = 0;
  let lists = 0;
  const before = writers.map((w) => snap(w.counting, prefix.wire));
  const wire0 = prefix.wire.snapshot();
  const t0 = performance.now();
  await Promise.all(
    writers.map(async (w, k) => {
      while (started < CFG.appends) {
        const i = ++started;
        const id = pick(ids);
        firstTouches[k]!.add(id);
        await w.sessions.append(NS, id, { messages: [shortUserMessage(`x${i}`)] }, undefined);
        if (i % CFG.listEvery === 0) {
          lists++;
          await w.sessions.list(NS, { limit: 20 }, { schedule: (job) => void jobs.push(job) });
        }
      }
    }),
  );
  await Promise.all(jobs);
  const seconds = (performance.now() - t0) / 1000;
  const tally = addTallies(
    ...writers.map((w, k) => accumulate(emptyTally(), before[k]!, snap(w.counting, prefix.wire))),
  );
  // The wire counter is per prefix, so each writer's delta holds everyone's requests: take it once.
  const wire1 = prefix.wire.snapshot();
  tally.wire = {};
  for (const k of new Set([...Object.keys(wire0.counts), ...Object.keys(wire1.counts)])) {
    const v = (wire1.counts[k] ?? 0) - (wire0.counts[k] ?? 0);
    if (v) tally.wire[k] = v;
  }
  tally.conflicts = wire1.conflicts - wire0.conflicts;
  const sessionGets = tally.wire['GetObject sessions'] ?? 0;
  const byAppends = firstTouches.reduce((a, t) => a + t.size, 0) + tally.conflicts;
  for (const w of writers) prefix.release(w.client);
  const out: ConcurrentMix = {
    sessions: ids.length,
    writers: CFG.devices,
    appends: CFG.appends,
    listEvery: CFG.listEvery,
    lists,
    seconds: q(seconds, 's', 1),
    compactions: tally.wire['PutObject m/r'] ?? 0,
    perAppend: perOp(tally, CFG.appends),
    manifestBaseBytesPerAppend: q(
      ((tally.writtenByKind['m/g'] ?? 0) + (tally.writtenByKind['m/r'] ?? 0)) / CFG.appends,
      'bytes/append',
      1,
    ),
    bytesBeyondSessionPerAppend: q(
      (tally.bytesWritten - (tally.writtenByKind['sessions'] ?? 0)) / CFG.appends,
      'bytes/append',
      1,
    ),
    sessionGets,
    sessionGetsByAppends: byAppends,
    verificationGetsEstimate: Math.max(0, sessionGets - byAppends),
    conflicts: tally.conflicts,
    note:
      `${CFG.devices} SessionStores append ${CFG.appends} times in all to random sessions; whoever completes every ` +
      `${CFG.listEvery}th append lists (20); compactions run in the background and are awaited at the end. ` +
      'Per-append figures include everything: appends, lists and compactions.',
  };
  log(
    `  concurrent mix at ${ids.length}: ${out.compactions} compactions for ${lists} lists, base ${fmtBytes(out.manifestBaseBytesPerAppend.value)}/append`,
  );
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 2: append latency by session size

interface SizeLatency {
  size: string;
  sessionBytes: Q;
  messages: number;
  warm: Latency & { sessionGetsPerAppend: Q };
  cold: Latency & { sessionGetsPerAppend: Q };
  bytesWrittenPerAppend: Q;
  auditBytesPerAppend: Q;
  createMs: Q;
}

async function appendLatency(target: Target): Promise<SizeLatency[]> {
  const prefix = new Prefix(target, 'sizes');
  const out: SizeLatency[] = [];
  try {
    for (const size of SESSION_SIZES) {
      const S = prefix.stack();
      const messages = conversation(size.bytes);
      const created = await timed(() =>
        S.sessions.create(NS, {
          task: `Long session of ${size.label}`,
          model: 'claude-sonnet-4-5',
          provider: 'anthropic',
          messages,
        }),
      );
      const id = created.value.session.id;
      const sessionBytes = created.value.receipt.bytes;
      const run = async (cold: boolean) => {
        const ms: number[] = [];
        const tally = emptyTally();
        for (let i = 0; i < CFG.sizeAppends; i++) {
          const st = cold ? prefix.stack() : S;
          const s0 = snap(st.counting, prefix.wire);
          const t = await timed(() =>
            st.sessions.append(
              NS,
              id,
              { messages: [shortUserMessage(`${cold ? 'c' : 'w'}${i}`)] },
              undefined,
            ),
          );
          accumulate(tally, s0, snap(st.counting, prefix.wire));
          ms.push(t.ms);
        }
        return { ms, tally };
      };
      const warm = await run(false);
      const cold = await run(true);
      const gets = (t: Tally) =>
        q((t.wire['GetObject sessions'] ?? 0) / CFG.sizeAppends, 'requests/append');
      const row: SizeLatency = {
        size: size.label,
        sessionBytes: q(sessionBytes, 'bytes', 0),
        messages: messages.length,
        warm: { ...latency(warm.ms), sessionGetsPerAppend: gets(warm.tally) },
        cold: { ...latency(cold.ms), sessionGetsPerAppend: gets(cold.tally) },
        bytesWrittenPerAppend: q(
          addTallies(warm.tally, cold.tally).bytesWritten / (2 * CFG.sizeAppends),
          'bytes/append',
          0,
        ),
        auditBytesPerAppend: q(
          (addTallies(warm.tally, cold.tally).writtenByKind['audit'] ?? 0) / (2 * CFG.sizeAppends),
          'bytes/append',
          0,
        ),
        createMs: q(created.ms, 'ms', 1),
      };
      out.push(row);
      log(`  ${size.label}: warm p50 ${row.warm.p50.value} ms, cold p50 ${row.cold.p50.value} ms`);
    }
  } finally {
    prefix.destroy();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 3: list and latest latency

interface ReadLatency extends Latency {
  perOp: PerOp;
}

interface ListLatency {
  sessions: number;
  prefix: string;
  list: Record<string, ReadLatency>;
  latest: Record<string, ReadLatency>;
}

async function readLatency(ds: Dataset): Promise<ListLatency> {
  const { prefix, ids } = ds;
  const n = ids.length;
  const W = prefix.stack();
  const listOp = (st: Stack) => async () => {
    const jobs: Promise<unknown>[] = [];
    const r = await st.sessions.list(NS, { limit: 20 }, { schedule: (w) => void jobs.push(w) });
    if (r.sessions.length !== Math.min(20, n))
      throw new Error(`list returned ${r.sessions.length} sessions`);
    return jobs;
  };
  const latestOp = (st: Stack) => async () => {
    const jobs: Promise<unknown>[] = [];
    await st.sessions.latest(NS, { schedule: (w) => void jobs.push(w) });
    return jobs;
  };
  /** Runs `reps` timed calls, each on the stack `stackFor` gives; background work is awaited untimed. */
  const series = async (
    reps: number,
    stackFor: () => Stack,
    op: (st: Stack) => () => Promise<Promise<unknown>[]>,
    release = false,
  ) => {
    const ms: number[] = [];
    const tally = emptyTally();
    for (let i = 0; i < reps; i++) {
      const st = stackFor();
      const s0 = snap(st.counting, prefix.wire);
      const t = await timed(op(st));
      accumulate(tally, s0, snap(st.counting, prefix.wire));
      await Promise.all(t.value);
      ms.push(t.ms);
      if (release) prefix.release(st.client);
    }
    const out: ReadLatency = { ...latency(ms), perOp: perOp(tally, reps) };
    return out;
  };
  // Warm-up of the warm instance (not measured).
  await listOp(W)();
  await latestOp(W)();
  const res: ListLatency = { sessions: n, prefix: prefix.prefix, list: {}, latest: {} };
  res.list['warm'] = await series(CFG.lat.warm, () => W, listOp);
  res.latest['warm'] = await series(CFG.lat.warm, () => W, latestOp);
  res.list['cold'] = await series(CFG.lat.cold, () => prefix.stack(), listOp);
  res.latest['cold'] = await series(CFG.lat.cold, () => prefix.stack(), latestOp);
  res.list['cold, new S3 client'] = await series(
    CFG.lat.coldClient,
    () => prefix.stack(true),
    listOp,
    true,
  );
  res.latest['cold, new S3 client'] = await series(
    CFG.lat.coldClient,
    () => prefix.stack(true),
    latestOp,
    true,
  );
  // The worst case a reader meets: 63 log records not yet folded into a base (no list ran since).
  const A = prefix.stack();
  for (let i = 0; i < MAX_UNCOVERED; i++)
    await A.sessions.append(NS, pick(ids), { messages: [shortUserMessage(`u${i}`)] }, undefined);
  res.list[`cold, ${MAX_UNCOVERED} uncovered records`] = await series(
    CFG.lat.cold,
    () => prefix.stack(),
    listOp,
  );
  res.latest[`cold, ${MAX_UNCOVERED} uncovered records`] = await series(
    CFG.lat.cold,
    () => prefix.stack(),
    latestOp,
  );
  res.list[`warm, ${MAX_UNCOVERED} uncovered records`] = await series(
    CFG.lat.warm,
    () => W,
    listOp,
  );
  await A.sessions.manifest.compact(NS, true);
  log(
    `  list/latest at ${n}: warm list p50 ${res.list['warm']!.p50.value} ms, cold list p50 ${res.list['cold']!.p50.value} ms`,
  );
  return res;
}

// ---------------------------------------------------------------------------------------------------------
// Scenario 4: concurrent appenders

interface Concurrency {
  case: string;
  devices: number;
  appendsPerDevice: number;
  messages: number;
  seconds: Q;
  messagesPerSecond: Q;
  appendLatency: Latency;
  conflicts: number;
  sessionGets: number;
  sessionPuts: number;
  verification: {
    storedExactlyOnce: boolean;
    expected: number;
    found: number;
    duplicates: number;
    missing: number;
    perWriterOrderKept: boolean;
    revisionsOk: boolean;
    manifestAgrees: boolean;
  };
}

async function concurrency(target: Target): Promise<Concurrency[]> {
  const out: Concurrency[] = [];
  for (const shared of [true, false]) {
    const prefix = new Prefix(target, shared ? 'conc1' : 'conc8');
    try {
      const devices = Array.from({ length: CFG.devices }, () => prefix.stack(true));
      const ids: string[] = [];
      for (let d = 0; d < (shared ? 1 : CFG.devices); d++) {
        const task = taskString(d);
        ids.push(
          (await devices[d]!.sessions.create(NS, { task, messages: firstMessages(task) })).session
            .id,
        );
      }
      const before = prefix.wire.snapshot();
      const ms: number[] = [];
      const t0 = performance.now();
      await Promise.all(
        devices.map(async (dev, w) => {
          const id = shared ? ids[0]! : ids[w]!;
          for (let i = 0; i < CFG.perDevice; i++) {
            const t = await timed(() =>
              dev.sessions.append(
                NS,
                id,
                { messages: [shortUserMessage(`d${w}-m${i}`)] },
                undefined,
              ),
            );
            ms.push(t.ms);
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const after = prefix.wire.snapshot();
      const delta = (k: string) => (after.counts[k] ?? 0) - (before.counts[k] ?? 0);
      // Verify with a fresh device: every marker exactly once, each writer's messages in order.
      const checker = prefix.stack(true);
      const expected = CFG.devices * CFG.perDevice;
      const seen = new Map<string, number>();
      let orderKept = true;
      let revisionsOk = true;
      let manifestAgrees = true;
      const jobs: Promise<unknown>[] = [];
      const listed = await checker.sessions.list(
        NS,
        { limit: 100 },
        { schedule: (w) => void jobs.push(w) },
      );
      await Promise.all(jobs);
      for (const id of ids) {
        const s = await checker.sessions.get(NS, id);
        const markers = s.messages
          .map((m) => /^\[(d\d+-m\d+)\]/.exec(m.content)?.[1])
          .filter((x): x is string => x !== undefined);
        for (const mk of markers) seen.set(mk, (seen.get(mk) ?? 0) + 1);
        for (let w = 0; w < CFG.devices; w++) {
          const mine = markers
            .filter((mk) => mk.startsWith(`d${w}-`))
            .map((mk) => Number(mk.split('-m')[1]));
          if (mine.some((v, i) => i > 0 && v <= mine[i - 1]!)) orderKept = false;
        }
        const appendsHere = shared ? expected : CFG.perDevice;
        if (s.revision !== 1 + appendsHere) revisionsOk = false;
        const entry = listed.sessions.find((e) => e.id === id);
        if (!entry || entry.turns !== s.turns || entry.updated_at !== s.updated_at)
          manifestAgrees = false;
      }
      let duplicates = 0;
      let missing = 0;
      for (let w = 0; w < CFG.devices; w++) {
        for (let i = 0; i < CFG.perDevice; i++) {
          const c = seen.get(`d${w}-m${i}`) ?? 0;
          if (c === 0) missing++;
          if (c > 1) duplicates += c - 1;
        }
      }
      const found = [...seen.values()].reduce((a, c) => a + c, 0);
      const row: Concurrency = {
        case: shared
          ? `${CFG.devices} devices on 1 session`
          : `${CFG.devices} devices on ${CFG.devices} sessions`,
        devices: CFG.devices,
        appendsPerDevice: CFG.perDevice,
        messages: expected,
        seconds: q(seconds, 's', 2),
        messagesPerSecond: q(expected / seconds, 'messages/s', 1),
        appendLatency: latency(ms),
        conflicts: after.conflicts - before.conflicts,
        sessionGets: delta('GetObject sessions'),
        sessionPuts: delta('PutObject sessions'),
        verification: {
          storedExactlyOnce: duplicates === 0 && missing === 0 && found === expected,
          expected,
          found,
          duplicates,
          missing,
          perWriterOrderKept: orderKept,
          revisionsOk,
          manifestAgrees,
        },
      };
      out.push(row);
      log(
        `  ${row.case}: ${row.messagesPerSecond.value} msg/s, ${row.conflicts} lost CAS races, exactly once: ${row.verification.storedExactlyOnce}`,
      );
    } finally {
      prefix.destroy();
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Report

function opTable(costs: OpCosts[]): void {
  const rows: (string | number)[][] = [];
  for (const c of costs) {
    for (const [name, p] of Object.entries(c.ops)) {
      rows.push([
        `${c.sessions}`,
        name,
        p.operations,
        fmtNum(p.requests.get.value),
        fmtNum(p.requests.put.value),
        fmtNum(p.requests.delete.value),
        fmtNum(p.requests.list.value),
        fmtNum(p.requests.head.value),
        fmtNum(p.requests.total.value),
        fmtBytes(p.bytesWritten.value),
        fmtBytes(p.bytesWrittenBeyondSession.value),
        fmtNum(p.auditPuts.value),
        fmtBytes(p.auditBytes.value),
        fmtBytes(p.bytesRead.value),
      ]);
    }
  }
  table(
    '1. Storage requests and bytes per operation (averages; CountingStore calls)',
    [
      'N',
      'operation',
      'ops',
      'GET',
      'PUT',
      'DEL',
      'LIST',
      'HEAD',
      'total',
      'written',
      'beyond session',
      'audit PUT',
      'audit bytes',
      'read',
    ],
    rows,
  );
  for (const c of costs) {
    console.log(
      `   N=${c.sessions}: compactions during creates ${c.compactions.duringCreates}, during appends ${c.compactions.duringAppends}; ` +
        `base ${fmtBytes(c.compactions.baseBytesAtEnd.value)}; audit per append ${fmtNum(c.append.auditPutsPerAppend.value, 3)} PUT, ` +
        `${fmtBytes(c.append.auditBytesPerAppend.value)}; append HTTP by key class: ` +
        Object.entries(c.ops['append']!.httpByKind)
          .map(([k, v]) => `${k} ${fmtNum(v.value, 3)}`)
          .join(', '),
    );
  }
}

interface TargetCheck {
  name: string;
  value: string;
  limit: string;
  pass: boolean;
}

function appendTargets(costs: OpCosts[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const big = costs[costs.length - 1]!;
  const small = costs[0]!;
  const a = big.append;
  const appends = CFG.appends;
  checks.push({
    name: `append: session PUTs per append (N=${big.sessions})`,
    value: fmtNum(a.sessionPuts / appends, 3),
    limit: '1 (conditional)',
    pass: a.sessionPuts === appends,
  });
  checks.push({
    name: `append: session GETs per append (N=${big.sessions})`,
    value: `${fmtNum(a.sessionGets / appends, 3)} (${a.sessionGets} GETs, ${a.distinctSessionsTouched} sessions first touched)`,
    limit: '<= 1, none when cached',
    pass: a.sessionGets <= appends && a.sessionGets <= a.distinctSessionsTouched,
  });
  checks.push({
    name: `append: other requests per append (N=${big.sessions})`,
    value: `${fmtNum(a.otherRequestsPerAppend.value, 3)} (audit PUT ${fmtNum(a.auditPutsPerAppend.value, 3)} included)`,
    limit: `<= ${TARGET.otherRequestsPerAppend}`,
    pass: a.otherRequestsPerAppend.value <= TARGET.otherRequestsPerAppend,
  });
  checks.push({
    name: `append: other requests per append, audit PUT excluded (N=${big.sessions})`,
    value: fmtNum(a.otherRequestsPerAppendWithoutAudit.value, 3),
    limit: `<= ${TARGET.otherRequestsPerAppend}`,
    pass: a.otherRequestsPerAppendWithoutAudit.value <= TARGET.otherRequestsPerAppend,
  });
  checks.push({
    name: `append: bytes written beyond the session (N=${big.sessions})`,
    value: `${fmtBytes(a.bytesBeyondSessionPerAppend.value)} (audit ${fmtBytes(a.auditBytesPerAppend.value)} included)`,
    limit: `< ${fmtBytes(TARGET.bytesBeyondSessionPerAppend)}`,
    pass: a.bytesBeyondSessionPerAppend.value < TARGET.bytesBeyondSessionPerAppend,
  });
  if (costs.length > 1) {
    const ratio =
      a.bytesBeyondSessionPerAppend.value /
      Math.max(1, small.append.bytesBeyondSessionPerAppend.value);
    const nRatio = big.sessions / small.sessions;
    checks.push({
      name: `append: manifest bytes independent of N (${small.sessions} -> ${big.sessions})`,
      value: `x${ratio.toFixed(2)} (pages+roots ${fmtBytes(small.append.manifestBaseBytesPerAppend.value)} -> ${fmtBytes(a.manifestBaseBytesPerAppend.value)} per append)`,
      limit: `no growth with N (x${nRatio} sessions)`,
      pass: ratio < 1.5,
    });
  }
  return checks;
}

function main_report(
  populates: Dataset['populate'][],
  costs: OpCosts[],
  mixes: ConcurrentMix[],
  sizes: SizeLatency[],
  reads: ListLatency[],
  conc: Concurrency[],
  pipelineChecks: PipelineCheck[],
): { checks: TargetCheck[] } {
  table(
    `0. Populate (create with system + user message, ${POPULATE_CONCURRENCY} in parallel, list every ${CFG.populateListEvery} creates)`,
    ['N', 'seconds', 'creates/s', 'compactions', 'manifest pages'],
    populates.map((p) => [
      p.sessions,
      p.seconds.value,
      p.createsPerSecond.value,
      p.compactions,
      fmtBytes(p.baseBytes.value),
    ]),
  );
  opTable(costs);
  table(
    `1b. The append mix with ${CFG.devices} writers at once (${CFG.appends} appends, list every ${CFG.listEvery}; per append, everything included)`,
    [
      'N',
      'seconds',
      'lists',
      'compactions',
      'HTTP req',
      'beyond session',
      'audit PUT',
      'audit bytes',
      'pages+roots',
      'session GETs',
      'of which verification (est.)',
    ],
    mixes.map((m) => [
      m.sessions,
      m.seconds.value,
      m.lists,
      m.compactions,
      fmtNum(m.perAppend.httpRequests.value),
      fmtBytes(m.bytesBeyondSessionPerAppend.value),
      fmtNum(m.perAppend.auditPuts.value),
      fmtBytes(m.perAppend.auditBytes.value),
      fmtBytes(m.manifestBaseBytesPerAppend.value),
      m.sessionGets,
      m.verificationGetsEstimate,
    ]),
  );
  table(
    `2. Append latency (${CFG.sizeAppends} sequential appends of one ~200-byte message; ms)`,
    [
      'session',
      'bytes',
      'warm p50',
      'warm p99',
      'cold p50',
      'cold p99',
      'cold GETs/append',
      'written/append',
      'of which audit',
    ],
    sizes.map((s) => [
      s.size,
      fmtBytes(s.sessionBytes.value),
      s.warm.p50.value,
      s.warm.p99.value,
      s.cold.p50.value,
      s.cold.p99.value,
      s.cold.sessionGetsPerAppend.value,
      fmtBytes(s.bytesWrittenPerAppend.value),
      fmtBytes(s.auditBytesPerAppend.value),
    ]),
  );
  const rows: (string | number)[][] = [];
  for (const r of reads) {
    for (const op of ['list', 'latest'] as const) {
      for (const [mode, l] of Object.entries(r[op])) {
        rows.push([
          r.sessions,
          op,
          mode,
          l.samples,
          l.p50.value,
          l.p99.value,
          fmtNum(l.perOp.httpRequests.value),
          fmtBytes(l.perOp.bytesRead.value),
        ]);
      }
    }
  }
  table(
    '3. list (limit 20) and latest latency (ms)',
    ['N', 'op', 'mode', 'samples', 'p50', 'p99', 'HTTP req/op', 'read/op'],
    rows,
  );
  table(
    `4. Concurrent appenders (${CFG.devices} SessionStores, ${CFG.perDevice} appends each, no If-Match)`,
    [
      'case',
      'msgs/s',
      'p50 ms',
      'p99 ms',
      'lost CAS races',
      'session GETs',
      'exactly once',
      'order kept',
      'manifest ok',
    ],
    conc.map((c) => [
      c.case,
      c.messagesPerSecond.value,
      c.appendLatency.p50.value,
      c.appendLatency.p99.value,
      c.conflicts,
      c.sessionGets,
      `${c.verification.storedExactlyOnce} (${c.verification.found}/${c.verification.expected})`,
      String(c.verification.perWriterOrderKept),
      String(c.verification.manifestAgrees),
    ]),
  );
  const checks: TargetCheck[] = [...pipelineChecks, ...appendTargets(costs)];
  for (const r of reads) {
    for (const op of ['list', 'latest'] as const) {
      for (const mode of ['warm', 'cold', `cold, ${MAX_UNCOVERED} uncovered records`]) {
        const l = r[op][mode]!;
        checks.push({
          name: `${op} p50, ${mode} (N=${r.sessions})`,
          value: `${l.p50.value} ms`,
          limit: `< ${TARGET.listP50Ms} ms`,
          pass: l.p50.value < TARGET.listP50Ms,
        });
      }
    }
  }
  for (const c of conc)
    checks.push({
      name: `every message stored exactly once: ${c.case}`,
      value: `${c.verification.found}/${c.verification.expected}`,
      limit: 'all, once',
      pass: c.verification.storedExactlyOnce,
    });
  table(
    'Targets (informational: never fails the run)',
    ['target', 'measured', 'limit', 'result'],
    checks.map((c) => [c.name, c.value, c.limit, c.pass ? 'PASS' : 'FAIL']),
  );
  return { checks };
}

// ---------------------------------------------------------------------------------------------------------

/** Units of the plain counts in the results, by field name (the other figures are already {value, unit}). */
const COUNT_UNITS: Record<string, string> = {
  sessions: 'sessions',
  concurrency: 'parallel creates',
  compactions: 'compactions',
  duringCreates: 'compactions',
  duringAppends: 'compactions',
  manifestEntries: 'entries',
  operations: 'operations',
  samples: 'operations',
  distinctSessionsTouched: 'sessions',
  sessionGets: 'requests',
  sessionPuts: 'requests',
  sessionGetsByAppends: 'requests',
  verificationGetsEstimate: 'requests',
  conflicts: 'lost compare-and-swap races (HTTP 412)',
  writers: 'SessionStores',
  devices: 'SessionStores',
  appends: 'appends',
  appendsPerDevice: 'appends',
  listEvery: 'writes',
  lists: 'lists',
  messages: 'messages',
  expected: 'messages',
  found: 'messages',
  duplicates: 'messages',
  missing: 'messages',
  cores: 'cores',
  seed: 'PRNG seed',
};

/** JSON.stringify replacer: every plain number becomes {value, unit}. */
function withUnits(key: string, value: unknown): unknown {
  if (typeof value !== 'number' || key === 'value') return value;
  if (key in COUNT_UNITS) return { value, unit: COUNT_UNITS[key] };
  // Maps of request counts by key class (populate.wireRequests: "PutObject m/l" and the like).
  if (/^[A-Z][A-Za-z0-9]+ /.test(key)) return { value, unit: 'requests' };
  return { value, unit: 'count' };
}

function radosgwVersion(): string {
  try {
    return execFileSync('radosgw', ['--version'], { encoding: 'utf8' }).trim();
  } catch (err) {
    return `unknown (${(err as Error).message.split('\n')[0]})`;
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const t0 = performance.now();
  const loadAtStart = os.loadavg();
  log(`Satchel benchmark${QUICK ? ' (--quick)' : ''}: sizes ${CFG.sizes.join(', ')}`);
  const production = await setUpProduction();
  log(
    `SessionStores as in lib/http/app.ts: defaultPipeline (maxSessionBytes ${production.maxSessionBytes}, ${production.knownValues} known values) + AuditLog`,
  );
  log('section P: save pipeline CPU (no storage)');
  const pipelineStart = performance.now();
  const pipeline = await runPipelineBench({ quick: QUICK, log });
  log(`section P done in ${((performance.now() - pipelineStart) / 1000).toFixed(1)} s`);
  let rgw: S3Target | undefined;
  const stopOnSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: stopping radosgw`);
    void (rgw?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    const rgwStart = performance.now();
    rgw = await startRadosgw({
      memstoreBytes: 6 * 1024 ** 3,
      bucket: 'satchel-bench',
      log: (l) => log(l),
    });
    const rgwStartSeconds = (performance.now() - rgwStart) / 1000;
    const target: Target = rgw;

    const populates: Dataset['populate'][] = [];
    const costs: OpCosts[] = [];
    const mixes: ConcurrentMix[] = [];
    const reads: ListLatency[] = [];
    for (const n of CFG.sizes) {
      // One dataset per N, shared by scenarios 3, 1 and 1b in that order (populating 10,000 sessions twice
      // does not fit the time budget). Scenario 3 only reads, except 63 appends that it compacts away.
      log(`dataset of ${n} sessions: populating`);
      const ds = await populate(target, `n${n}`, n);
      populates.push(ds.populate);
      log(`scenario 3 at ${n} sessions: list / latest latency`);
      reads.push(await readLatency(ds));
      log(`scenario 1 at ${n} sessions: requests and bytes per operation`);
      costs.push(await opCosts(ds));
      log(`scenario 1b at ${n} sessions: the append mix with ${CFG.devices} writers at once`);
      mixes.push(await concurrentMix(ds));
      ds.prefix.destroy();
    }
    log('scenario 2: append latency by session size');
    const sizes = await appendLatency(target);
    log('scenario 4: concurrent appenders');
    const conc = await concurrency(target);

    const { checks } = main_report(
      populates,
      costs,
      mixes,
      sizes,
      reads,
      conc,
      (pipeline.checks as PipelineCheck[] | undefined) ?? [],
    );
    const wallSeconds = (performance.now() - t0) / 1000;
    const cpus = os.cpus();
    const results = {
      date: new Date(started).toISOString(),
      command: QUICK ? 'npm run bench -- --quick' : 'npm run bench',
      quick: QUICK,
      machine: {
        cpu: cpus[0]?.model ?? 'unknown',
        cores: cpus.length,
        totalMemory: q(os.totalmem(), 'bytes', 0),
        platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      },
      // Other work on the machine skews latencies (the request and byte counts do not depend on it).
      loadAverage: {
        atStart: q(loadAtStart[0]!, 'runnable tasks, 1-min average', 2),
        atEnd: q(os.loadavg()[0]!, 'runnable tasks, 1-min average', 2),
        atEnd15min: q(os.loadavg()[2]!, 'runnable tasks, 15-min average', 2),
      },
      node: process.version,
      radosgw: process.env.S3_ENDPOINT
        ? `external S3_ENDPOINT (${process.env.S3_ENDPOINT}); local binary: ${radosgwVersion()}`
        : radosgwVersion(),
      radosgwStart: q(rgwStartSeconds, 's', 1),
      wallTime: q(wallSeconds, 's', 1),
      config: {
        namespace: NS,
        sessions: CFG.sizes.map((n) => q(n, 'sessions', 0)),
        populateConcurrency: q(POPULATE_CONCURRENCY, 'parallel creates', 0),
        populateListEvery: q(CFG.populateListEvery, 'creates', 0),
        opCosts: {
          creates: q(CFG.creates, 'operations', 0),
          appends: q(CFG.appends, 'operations', 0),
          gets: q(CFG.gets, 'operations', 0),
          lists: q(CFG.lists, 'operations', 0),
          listEvery: q(CFG.listEvery, 'writes', 0),
        },
        readLatencySamples: {
          warm: q(CFG.lat.warm, 'operations', 0),
          cold: q(CFG.lat.cold, 'operations', 0),
          coldNewClient: q(CFG.lat.coldClient, 'operations', 0),
        },
        appendLatencySamples: q(CFG.sizeAppends, 'appends per mode', 0),
        concurrency: {
          devices: q(CFG.devices, 'SessionStores', 0),
          appendsPerDevice: q(CFG.perDevice, 'appends', 0),
        },
        memstoreBytes: q(6 * 1024 ** 3, 'bytes', 0),
        sessionStore: {
          as: 'lib/http/app.ts: new SessionStore(objects, { pipeline: defaultPipeline(...), audit: new AuditLog(objects, pipeline.redactText) }), objects = CountingStore(S3Store)',
          maxSessionBytes: q(production.maxSessionBytes, 'bytes', 0),
          knownValues: q(production.knownValues, 'configured secret values', 0),
        },
      },
      auditErrors: q(production.auditErrors, 'audit records not stored', 0),
      targets: {
        append:
          'an append costs one conditional PUT of the session, at most one GET of it (none when cached), and a manifest update ' +
          'that does not rewrite an index whose size grows with the number of sessions: at 10,000 sessions, at most 3 storage ' +
          "requests besides the session's own, and under 64 KB written beyond the session object, amortised over 1,000 appends",
        listLatest: 'p50 under 50 ms against local radosgw',
        checks,
      },
      pipeline,
      populate: populates,
      opCosts: costs,
      concurrentMix: mixes,
      appendLatency: sizes,
      listLatestLatency: reads,
      concurrency: conc,
    };
    // Only this benchmark's sections: search, continue, import and builds keep theirs.
    writeSections(RESULTS, results, withUnits);
    log(
      `wrote ${path.relative(process.cwd(), RESULTS)}; wall time ${wallSeconds.toFixed(1)} s; load average ${loadAtStart[0]!.toFixed(2)} at start, ${os.loadavg()[0]!.toFixed(2)} at end (${cpus.length} cores)`,
    );
  } finally {
    log('stopping radosgw');
    await rgw?.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
