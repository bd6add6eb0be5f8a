/**
 * Satchel against its peer on the same radosgw: the Strands Agents TypeScript SDK's S3 session storage
 * (`@strands-agents/sdk` 1.16.0, `S3Storage` under its `SessionManager`), and Satchel in process
 * (SessionStore over S3Store) and through HTTP (the real app on a loopback port, its answers read as
 * Satchel's client reads them: the bytes, then `decodeBody`). Issue 13, item 5.
 *
 *   npm run bench:peer                     3 rounds (~12 min on 2 cores); writes the `peer` section of
 *                                          bench/results.json
 *   npm run bench:peer -- --rounds 1       a smoke run (writes nothing unless --write)
 *   … --split-bytes 8192 --segment-bytes 4096   Satchel in process with another storage layout (never writes)
 *   … --keyed                                    Satchel's appends with an Idempotency-Key each (never writes)
 *   … --sdk-only                                 Satchel's object requests through the AWS SDK, as on Workers,
 *                                                instead of the Node wire (never writes)
 *   … --concurrency-only                         only the 8-writer runs, with the writer changes (never writes)
 *
 * Each round runs every system once per session size (10, 100, 1,000, 10,000 messages of about 1 KB), in an
 * order rotated from round to round, then the concurrency runs. For each system and size:
 *  - warm append: the writer that created the session appends one message at a time (Strands: the agent
 *    pushes the message and its SessionManager saves the snapshot, as its MessageAddedEvent hook does with
 *    saveLatestOn 'message'; Satchel: the SessionStore (or server) that holds the session in its cache);
 *  - load: Strands restores the snapshot into a new agent; Satchel get (in process) or GET (HTTP) from the
 *    writer's store or server, which may hold a large session's base already;
 *  - load, new process: the same from a new SessionStore (HTTP: a new app), holding nothing (Strands: as
 *    its load);
 *  - stateless append: a writer that holds nothing (Strands: a new agent that restores the session, then
 *    adds its message; Satchel: a new SessionStore; HTTP: a new app, empty caches, behind the same port).
 *    Object construction is outside the timed part; the S3 connection pool is shared (as bench/run.ts does).
 *    Satchel's background work (log, audit, index records) is drained after each stateless append, as a
 *    Lambda drains it before returning, outside the timed part.
 * Requests and bytes are counted on the wire by one S3 middleware for all three (object bodies only),
 * background work included (drained before each count), and divided by the operations of the phase.
 * Then 8 writers × 25 appends on one session and on eight sessions (each writer its own agent / store /
 * S3 client; HTTP: 8 concurrent clients of the one server): acknowledged, stored exactly once, duplicated,
 * lost (acknowledged but not stored), each writer's order, messages/s acknowledged and kept.
 * Ratios are Satchel/Strands within one round; the tables show medians over rounds.
 *
 * The 10,000-message sessions (~10 MB) are bounded: fewer samples (see SAMPLES) and a time budget per phase.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRadosgw, type S3Target } from '../test/support/radosgw.js';
import {
  diffCounts,
  message,
  SatchelHttpSystem,
  SatchelSystem,
  StrandsSystem,
  toSatchel,
  type Msg,
  type System,
  type SystemName,
  type WireCounts,
  withIdempotencyKeys,
  withSdkOnly,
} from './peer-systems.js';
import { writeSections } from './results.js';
import { fmtBytes, percentile, setUpProduction } from './support.js';

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const ROUNDS = Number(argValue('--rounds') ?? 3);
/**
 * An experiment with the storage layout of Satchel in process (not the HTTP app): sessions split from
 * `--split-bytes` with `--segment-bytes` segments (docs/design.md, why sessions under 256 KiB stay whole).
 * Such a run never writes bench/results.json.
 */
const LAYOUT = {
  ...(argValue('--split-bytes') ? { splitBytes: Number(argValue('--split-bytes')) } : {}),
  ...(argValue('--segment-bytes') ? { segmentBytes: Number(argValue('--segment-bytes')) } : {}),
};
/** `--keyed`: Satchel's appends carry an Idempotency-Key, as its client's do (an experiment: never writes). */
const KEYED = process.argv.includes('--keyed');
if (KEYED) withIdempotencyKeys();
/** `--sdk-only`: Satchel without `nodeWire`, every request through the SDK (an experiment: never writes). */
const SDK_ONLY = process.argv.includes('--sdk-only');
if (SDK_ONLY) withSdkOnly();
/**
 * `--concurrency-only`: only the 8-writer runs, each round (an experiment: never writes). Their lines give
 * the writer changes in the one session's stored order (a leader's run of appends ends at each).
 */
const CONCURRENCY_ONLY = process.argv.includes('--concurrency-only');
const WRITE =
  Object.keys(LAYOUT).length === 0 &&
  !KEYED &&
  !CONCURRENCY_ONLY &&
  !SDK_ONLY &&
  (process.argv.includes('--write') || argValue('--rounds') === undefined);
const SIZES = (argValue('--sizes') ?? '10,100,1000,10000').split(',').map(Number);
/**
 * Samples per round and system (warm, stateless, load), and how many sessions of the size they are spread
 * over (round robin), so that the appends grow no session by more than a few messages: a "session of 10"
 * stays at 10 to 14 messages.
 */
const SAMPLES: Record<number, { warm: number; stateless: number; load: number; sessions: number }> =
  {
    10: { warm: 20, stateless: 10, load: 20, sessions: 10 },
    100: { warm: 20, stateless: 10, load: 20, sessions: 5 },
    1000: { warm: 12, stateless: 6, load: 12, sessions: 2 },
    10000: { warm: 5, stateless: 3, load: 5, sessions: 1 },
  };
/** A phase stops taking samples after this long (at least MIN_SAMPLES are taken). */
const PHASE_BUDGET_MS = 20_000;
const MIN_SAMPLES = 3;
const WRITERS = 8;
const PER_WRITER = 25;
const MESSAGE_BYTES = 1000;
const SYSTEMS: SystemName[] = ['strands', 'satchel', 'satchel-http'];

const here = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(here, 'results.json');

function log(line: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
}

// ---------------------------------------------------------------------------------------------------------
// Phases

type Op = 'warm' | 'stateless' | 'load' | 'cold';
const OPS: Op[] = ['warm', 'load', 'cold', 'stateless'];

interface PhaseResult {
  samples: number;
  p50: number;
  p99: number;
  mean: number;
  requests: number;
  bytesOut: number;
  bytesIn: number;
  byCommand: Record<string, number>;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

function perOp(d: WireCounts, n: number, ms: number[]): PhaseResult {
  const per: Record<string, number> = {};
  for (const [k, v] of Object.entries(d.byCommand)) per[k] = round3(v / n);
  return {
    samples: n,
    p50: round3(percentile(ms, 50)),
    p99: round3(percentile(ms, 99)),
    mean: round3(ms.reduce((a, b) => a + b, 0) / n),
    requests: round3(d.requests / n),
    bytesOut: Math.round(d.bytesOut / n),
    bytesIn: Math.round(d.bytesIn / n),
    byCommand: per,
  };
}

async function phase(
  sys: System,
  count: number,
  prepare: (i: number) => Promise<() => Promise<unknown>>,
  drainEach: boolean,
): Promise<PhaseResult> {
  await sys.drain();
  const before = sys.meter.snapshot();
  const ms: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const fn = await prepare(i);
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
    if (drainEach) await sys.drain();
    if (performance.now() - t0 > PHASE_BUDGET_MS && ms.length >= MIN_SAMPLES) break;
  }
  await sys.drain();
  return perOp(diffCounts(before, sys.meter.snapshot()), ms.length, ms);
}

let seq = 0;
const nextMarker = (what: string) => `${what}-${++seq}`;

async function sizeRun(
  sys: System,
  round: number,
  n: number,
  seed: Msg[],
): Promise<Record<Op, PhaseResult>> {
  const k = SAMPLES[n] ?? { warm: 5, stateless: 3, load: 5, sessions: 1 };
  const ids = Array.from({ length: k.sessions }, (_, j) => `r${round}-n${n}-${j}`);
  for (const id of ids) {
    await sys.create(id, seed);
    // One unmeasured append first: connections open, the server's cache filled, code paths warmed.
    await sys.appendWarm(id, message(n, nextMarker('warmup'), MESSAGE_BYTES));
  }
  const idOf = (i: number) => ids[i % ids.length]!;
  const out = {} as Record<Op, PhaseResult>;
  for (const op of OPS) {
    if (op === 'warm')
      out.warm = await phase(
        sys,
        k.warm,
        async (i) => () => sys.appendWarm(idOf(i), message(n + i, nextMarker('a'), MESSAGE_BYTES)),
        false,
      );
    else if (op === 'load')
      out.load = await phase(sys, k.load, (i) => sys.prepareLoad(idOf(i)), false);
    else if (op === 'cold')
      out.cold = await phase(sys, k.load, (i) => sys.prepareColdLoad(idOf(i)), false);
    else
      out.stateless = await phase(
        sys,
        k.stateless,
        async (i) => {
          const append = await sys.prepareStateless(idOf(i));
          return () => append(message(n + i, nextMarker('s'), MESSAGE_BYTES));
        },
        true,
      );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Sustained appends: bytes per append with folds included

/**
 * Appends per size in the sustained phase: enough for many sealed segments and merges of a session stored
 * as a base, segments and a delta, while the session grows by at most a few percent at 1,000 and 10,000
 * messages.
 */
const SUSTAINED: Record<number, number> = { 10: 40, 100: 80, 1000: 200, 10000: 500 };

interface SustainedResult {
  appends: number;
  /** Object bytes written per append, background work and parts (bases, segments) included. */
  bytesPerAppend: number;
  /**
   * The same from the second append on: without the first append's split of the session (created whole
   * with all its messages) into a base, which a session that grew by appends pays once, at 256 KiB.
   */
  afterSplitBytesPerAppend: number;
  requestsPerAppend: number;
  /** Parts (bases and segments) stored during the phase. */
  folds: number;
  /** Bytes of one appended message as JSON, and the issue's target for it: 2 x that + 4 KiB. */
  messageBytes: number;
  targetBytes: number;
}

/**
 * Satchel in process: a session of `n` messages, then many appends from the writer that created it, with
 * every byte written counted (the log, audit and index records, markers, deltas and the bases of folds).
 * Strands writes its whole snapshot on every append, as the warm-append row shows.
 */
async function sustainedRun(
  sys: SatchelSystem,
  round: number,
  n: number,
  seed: Msg[],
): Promise<SustainedResult> {
  const id = `r${round}-sus-${n}`;
  await sys.create(id, seed);
  await sys.drain();
  const appends = SUSTAINED[n] ?? 100;
  const before = sys.meter.snapshot();
  const basesBefore = sys.counting!.counts.putsByKind['b'] ?? 0;
  let messageBytes = 0;
  let afterFirst = before;
  for (let i = 0; i < appends; i++) {
    const m = message(n + i, nextMarker('u'), MESSAGE_BYTES);
    messageBytes = JSON.stringify(toSatchel(m)).length;
    await sys.appendWarm(id, m);
    if (i === 0) {
      await sys.drain();
      afterFirst = sys.meter.snapshot();
    }
  }
  await sys.drain();
  const d = diffCounts(before, sys.meter.snapshot());
  const steady = diffCounts(afterFirst, sys.meter.snapshot());
  return {
    appends,
    bytesPerAppend: Math.round(d.bytesOut / appends),
    afterSplitBytesPerAppend: Math.round(steady.bytesOut / (appends - 1)),
    requestsPerAppend: round3(d.requests / appends),
    folds: (sys.counting!.counts.putsByKind['b'] ?? 0) - basesBefore,
    messageBytes,
    targetBytes: 2 * messageBytes + 4096,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Concurrency

interface ConcResult {
  acknowledged: number;
  storedOnce: number;
  duplicated: number;
  lost: number;
  /** Stored although the writer got an error (an ambiguous failure). */
  storedUnacknowledged: number;
  failed: number;
  orderKept: boolean;
  seconds: number;
  messagesPerSecond: number;
  keptPerSecond: number;
  requestsPerMessage: number;
  conflicts: number;
  /** How often the writer changes along the stored order (one session: a leader's run ends at each). */
  writerChanges: number;
  firstError?: string;
}

async function concurrencyRun(
  sys: System,
  round: number,
  mode: 'one' | 'eight',
  seed: Msg[],
): Promise<ConcResult> {
  const ids =
    mode === 'one'
      ? [`r${round}-c1`]
      : Array.from({ length: WRITERS }, (_, w) => `r${round}-c8-${w}`);
  for (const id of ids) await sys.create(id, seed);
  await sys.drain();
  const writers = await Promise.all(
    Array.from({ length: WRITERS }, (_, w) => sys.openWriter(ids[mode === 'one' ? 0 : w]!)),
  );
  const tag = `c${round}${mode}`;
  const acked = new Set<string>();
  let failed = 0;
  let firstError: string | undefined;
  const before = sys.meter.snapshot();
  const t0 = performance.now();
  await Promise.all(
    writers.map(async (wr, w) => {
      for (let i = 0; i < PER_WRITER; i++) {
        const marker = `${tag}-w${w}-${i}`;
        try {
          await wr.append(message(i, marker, MESSAGE_BYTES));
          acked.add(marker);
        } catch (err) {
          failed++;
          firstError ??= (err as Error).message.slice(0, 200);
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await sys.drain();
  const d = diffCounts(before, sys.meter.snapshot());
  for (const wr of writers) wr.close();

  const found = new Map<string, number>();
  let orderKept = true;
  let writerChanges = 0;
  const re = new RegExp(`^\\[(${tag}-w(\\d+)-(\\d+))\\]`);
  for (const id of ids) {
    const last = new Map<number, number>();
    let previous: number | undefined;
    for (const text of await sys.readTexts(id)) {
      const m = re.exec(text);
      if (!m) continue;
      found.set(m[1]!, (found.get(m[1]!) ?? 0) + 1);
      const w = Number(m[2]);
      const i = Number(m[3]);
      if ((last.get(w) ?? -1) >= i) orderKept = false;
      last.set(w, i);
      if (previous !== undefined && previous !== w) writerChanges++;
      previous = w;
    }
  }
  let storedOnce = 0;
  let duplicated = 0;
  let lost = 0;
  for (const m of acked) {
    const c = found.get(m) ?? 0;
    if (c === 1) storedOnce++;
    else if (c > 1) duplicated++;
    else lost++;
  }
  let storedUnacknowledged = 0;
  for (const m of found.keys()) if (!acked.has(m)) storedUnacknowledged++;
  const kept = storedOnce + duplicated;
  return {
    acknowledged: acked.size,
    storedOnce,
    duplicated,
    lost,
    storedUnacknowledged,
    failed,
    orderKept,
    seconds: round3(seconds),
    messagesPerSecond: round3(acked.size / seconds),
    keptPerSecond: round3(kept / seconds),
    requestsPerMessage: round3(d.requests / Math.max(1, acked.size)),
    conflicts: d.conflicts,
    writerChanges,
    ...(firstError ? { firstError } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Report

const median = (xs: number[]) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
};

type SizeRounds = Record<SystemName, Record<Op, PhaseResult>>[];
type ConcRounds = Record<'one' | 'eight', Record<SystemName, ConcResult>>[];

const PHASE_METRICS = ['p50', 'p99', 'mean', 'requests', 'bytesOut', 'bytesIn'] as const;

function summarise(sizes: Record<number, SizeRounds>, conc: ConcRounds) {
  const medians: Record<string, unknown> = {};
  const ratios: Record<string, unknown> = {};
  for (const [n, rounds] of Object.entries(sizes)) {
    const mSize: Record<string, unknown> = {};
    const rSize: Record<string, unknown> = {};
    for (const op of OPS) {
      const mOp: Record<string, Record<string, number>> = {};
      for (const s of SYSTEMS) {
        mOp[s] = {};
        for (const k of PHASE_METRICS) mOp[s][k] = round3(median(rounds.map((r) => r[s][op][k])));
        mOp[s].samplesPerRound = median(rounds.map((r) => r[s][op].samples));
      }
      mSize[op] = mOp;
      const rOp: Record<string, Record<string, number>> = {};
      for (const s of ['satchel', 'satchel-http'] as const) {
        rOp[s] = {};
        for (const k of PHASE_METRICS)
          rOp[s][k] = round3(median(rounds.map((r) => r[s][op][k] / r.strands[op][k])));
      }
      rSize[op] = rOp;
    }
    medians[n] = mSize;
    ratios[n] = rSize;
  }
  const concMedians: Record<string, unknown> = {};
  const concRatios: Record<string, unknown> = {};
  for (const mode of ['one', 'eight'] as const) {
    const m: Record<string, Record<string, number | boolean>> = {};
    for (const s of SYSTEMS) {
      const rs = conc.map((r) => r[mode][s]);
      m[s] = {
        acknowledged: median(rs.map((r) => r.acknowledged)),
        storedOnce: median(rs.map((r) => r.storedOnce)),
        duplicated: median(rs.map((r) => r.duplicated)),
        lost: median(rs.map((r) => r.lost)),
        lostTotal: rs.reduce((a, r) => a + r.lost, 0),
        duplicatedTotal: rs.reduce((a, r) => a + r.duplicated, 0),
        failedTotal: rs.reduce((a, r) => a + r.failed, 0),
        orderKeptEveryRound: rs.every((r) => r.orderKept),
        messagesPerSecond: round3(median(rs.map((r) => r.messagesPerSecond))),
        keptPerSecond: round3(median(rs.map((r) => r.keptPerSecond))),
        requestsPerMessage: round3(median(rs.map((r) => r.requestsPerMessage))),
      };
    }
    concMedians[mode] = m;
    const r: Record<string, Record<string, number>> = {};
    for (const s of ['satchel', 'satchel-http'] as const)
      r[s] = {
        messagesPerSecond: round3(
          median(conc.map((x) => x[mode][s].messagesPerSecond / x[mode].strands.messagesPerSecond)),
        ),
        keptPerSecond: round3(
          median(conc.map((x) => x[mode][s].keptPerSecond / x[mode].strands.keptPerSecond)),
        ),
      };
    concRatios[mode] = r;
  }
  return { medians, ratios, concMedians, concRatios };
}

function table(head: string[], rows: string[][]): string {
  const line = (r: string[]) => `| ${r.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

const f = (n: number, d = 1) =>
  !Number.isFinite(n) ? '–' : n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(d);
const x = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '–');

function markdown(s: ReturnType<typeof summarise>): string {
  const M = s.medians as Record<string, Record<Op, Record<SystemName, Record<string, number>>>>;
  const R = s.ratios as Record<
    string,
    Record<Op, Record<'satchel' | 'satchel-http', Record<string, number>>>
  >;
  const label: Record<Op, string> = {
    warm: 'warm append',
    stateless: 'stateless append',
    load: 'load',
    cold: 'load, new process',
  };
  const latency: string[][] = [];
  const cost: string[][] = [];
  for (const n of Object.keys(M)) {
    for (const op of ['warm', 'stateless', 'load', 'cold'] as Op[]) {
      const m = M[n]![op];
      const r = R[n]![op];
      latency.push([
        Number(n).toLocaleString('en-US'),
        label[op],
        `${f(m.strands.p50!)} / ${f(m.strands.p99!)}`,
        `${f(m.satchel.p50!)} / ${f(m.satchel.p99!)}`,
        x(r.satchel.p50!),
        `${f(m['satchel-http'].p50!)} / ${f(m['satchel-http'].p99!)}`,
        x(r['satchel-http'].p50!),
      ]);
      const c = (v: Record<string, number>) =>
        `${f(v.requests!, 2)}; ${fmtBytes(op === 'load' || op === 'cold' ? v.bytesIn! : v.bytesOut!)}`;
      cost.push([
        Number(n).toLocaleString('en-US'),
        label[op] + (op === 'load' || op === 'cold' ? ' (read)' : ' (written)'),
        c(m.strands),
        c(m.satchel),
        c(m['satchel-http']),
      ]);
    }
  }
  const CM = s.concMedians as Record<string, Record<SystemName, Record<string, number | boolean>>>;
  const CR = s.concRatios as Record<string, Record<string, Record<string, number>>>;
  const conc: string[][] = [];
  for (const mode of ['one', 'eight']) {
    for (const sys of SYSTEMS) {
      const m = CM[mode]![sys];
      conc.push([
        mode === 'one' ? 'one session' : 'eight sessions',
        sys === 'strands' ? 'Strands' : sys === 'satchel' ? 'Satchel in process' : 'Satchel HTTP',
        `${m.acknowledged} / ${m.storedOnce} / ${m.lost} / ${m.duplicated}`,
        m.orderKeptEveryRound ? 'yes' : 'no',
        f(m.messagesPerSecond as number),
        f(m.keptPerSecond as number),
        sys === 'strands' ? '' : x(CR[mode]![sys]!.messagesPerSecond!),
      ]);
    }
  }
  return [
    'Latency in ms, p50 / p99, median over rounds; ratio = Satchel/Strands p50 within a round, median over rounds:',
    '',
    table(
      ['messages', 'operation', 'Strands', 'Satchel in process', 'ratio', 'Satchel HTTP', 'ratio'],
      latency,
    ),
    '',
    'Storage requests and object bytes per operation (background work included), median over rounds:',
    '',
    table(['messages', 'operation', 'Strands', 'Satchel in process', 'Satchel HTTP'], cost),
    '',
    `${WRITERS} writers × ${PER_WRITER} appends (median over rounds; acknowledged / stored once / lost / duplicated; messages/s acknowledged and kept):`,
    '',
    table(
      [
        'sessions',
        'system',
        'ack / once / lost / dup',
        'order kept',
        'msgs/s',
        'kept/s',
        'ratio msgs/s',
      ],
      conc,
    ),
  ].join('\n');
}

/** The sustained phase's table: Satchel's bytes per append with folds, beside Strands' (its whole snapshot). */
function sustainedTable(
  m: Record<
    string,
    {
      appends: number;
      bytesPerAppend: number;
      afterSplitBytesPerAppend: number;
      folds: number;
      targetBytes: number;
    }
  >,
  summary: ReturnType<typeof summarise>,
): string {
  const M = summary.medians as Record<
    string,
    Record<Op, Record<SystemName, Record<string, number>>>
  >;
  const rows = Object.entries(m).map(([n, v]) => [
    Number(n).toLocaleString('en-US'),
    String(v.appends),
    String(v.folds),
    fmtBytes(v.bytesPerAppend),
    fmtBytes(v.afterSplitBytesPerAppend),
    fmtBytes(v.targetBytes),
    M[n] ? fmtBytes(M[n]!.warm.strands.bytesOut!) : '',
  ]);
  return [
    'Bytes written per append over many appends, parts (bases, segments) and background records included (Satchel in process, median over rounds; "after the split" leaves out the first append, which stores the session created whole as a base; Strands writes its whole snapshot per append):',
    '',
    table(
      ['messages', 'appends', 'parts stored', 'Satchel', 'after the split', 'target', 'Strands'],
      rows,
    ),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// Main

function version(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).trim().split('\n')[0]!;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const started = new Date();
  const t0 = performance.now();
  const loadAtStart = os.loadavg();
  const strandsVersion = (
    JSON.parse(
      readFileSync(
        path.join(here, '..', 'node_modules', '@strands-agents', 'sdk', 'package.json'),
        'utf8',
      ),
    ) as { version: string }
  ).version;
  log(
    `peer benchmark: Strands S3Storage ${strandsVersion} vs Satchel; ${ROUNDS} rounds, sizes ${SIZES.join(', ')} messages of ${MESSAGE_BYTES} B`,
  );
  await setUpProduction();
  let rgw: S3Target | undefined;
  const stopOnSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: stopping radosgw`);
    void (rgw?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  const http = { sys: undefined as SatchelHttpSystem | undefined };
  try {
    rgw = await startRadosgw({
      memstoreBytes: 4 * 1024 ** 3,
      bucket: 'satchel-peer',
      log: (l) => log(l),
    });
    const target = rgw;
    http.sys = new SatchelHttpSystem(target);
    const systems: Record<SystemName, System> = {
      strands: new StrandsSystem(target),
      satchel: new SatchelSystem(target, LAYOUT),
      'satchel-http': http.sys,
    };
    if (Object.keys(LAYOUT).length)
      log(
        `Satchel in process with layout ${JSON.stringify(LAYOUT)} (an experiment: nothing written)`,
      );
    if (KEYED)
      log(`Satchel's appends carry an Idempotency-Key each (an experiment: nothing written)`);
    if (SDK_ONLY)
      log(`Satchel's object requests go through the AWS SDK (an experiment: nothing written)`);
    const seeds = new Map<number, Msg[]>();
    for (const n of [...SIZES, 10])
      seeds.set(
        n,
        Array.from({ length: n }, (_, i) => message(i, '', MESSAGE_BYTES)),
      );
    const sizes: Record<number, SizeRounds> = {};
    for (const n of SIZES) sizes[n] = [];
    const conc: ConcRounds = [];
    const sustained: Record<number, SustainedResult[]> = {};
    for (let r = 0; r < ROUNDS; r++) {
      const order = SYSTEMS.map((_, i) => SYSTEMS[(i + r) % SYSTEMS.length]!);
      log(`round ${r + 1}/${ROUNDS}: order ${order.join(', ')}`);
      for (const s of SYSTEMS) await systems[s].begin(r);
      for (const n of CONCURRENCY_ONLY ? [] : SIZES) {
        const row = {} as Record<SystemName, Record<Op, PhaseResult>>;
        for (const s of order) {
          const t = performance.now();
          row[s] = await sizeRun(systems[s], r, n, seeds.get(n)!);
          const w = row[s];
          log(
            `  ${n} msgs ${s}: warm p50 ${w.warm.p50.toFixed(1)} ms (${w.warm.requests} req, ${fmtBytes(w.warm.bytesOut)}), stateless p50 ${w.stateless.p50.toFixed(1)} ms, load p50 ${w.load.p50.toFixed(1)} ms [${((performance.now() - t) / 1000).toFixed(1)} s]`,
          );
        }
        sizes[n]!.push(row);
        const sus = await sustainedRun(systems.satchel as SatchelSystem, r, n, seeds.get(n)!);
        (sustained[n] ??= []).push(sus);
        log(
          `  ${n} msgs satchel sustained: ${sus.appends} appends, ${fmtBytes(sus.bytesPerAppend)} per append, ${fmtBytes(sus.afterSplitBytesPerAppend)} after the split (target ${fmtBytes(sus.targetBytes)}), ${sus.folds} parts stored`,
        );
      }
      const c = { one: {}, eight: {} } as ConcRounds[number];
      for (const mode of ['one', 'eight'] as const) {
        for (const s of order) {
          const res = await concurrencyRun(systems[s], r, mode, seeds.get(10)!);
          c[mode][s] = res;
          log(
            `  ${WRITERS}×${PER_WRITER} on ${mode === 'one' ? 'one session' : 'eight sessions'} ${s}: ack ${res.acknowledged}, once ${res.storedOnce}, lost ${res.lost}, dup ${res.duplicated}, order ${res.orderKept ? 'kept' : 'BROKEN'}, ${res.messagesPerSecond.toFixed(1)} msgs/s (${res.keptPerSecond.toFixed(1)} kept/s) in ${res.seconds.toFixed(1)} s, ${res.conflicts} refused, ${res.writerChanges} writer changes${res.firstError ? `; first error: ${res.firstError}` : ''}`,
          );
        }
      }
      conc.push(c);
      for (const s of SYSTEMS) await systems[s].end();
    }
    if (CONCURRENCY_ONLY) return log('concurrency only: bench/results.json not written');

    const summary = summarise(sizes, conc);
    const sustainedMedians = Object.fromEntries(
      Object.entries(sustained).map(([n, rs]) => [
        n,
        {
          appends: rs[0]!.appends,
          bytesPerAppend: median(rs.map((x) => x.bytesPerAppend)),
          afterSplitBytesPerAppend: median(rs.map((x) => x.afterSplitBytesPerAppend)),
          requestsPerAppend: median(rs.map((x) => x.requestsPerAppend)),
          folds: median(rs.map((x) => x.folds)),
          targetBytes: rs[0]!.targetBytes,
        },
      ]),
    );
    const md = markdown(summary) + '\n\n' + sustainedTable(sustainedMedians, summary);
    console.log('\n' + md + '\n');
    const wallSeconds = (performance.now() - t0) / 1000;
    const cpus = os.cpus();
    const peer = {
      date: started.toISOString(),
      command: `npm run bench:peer${ROUNDS !== 3 ? ` -- --rounds ${ROUNDS}` : ''}`,
      peer: `@strands-agents/sdk ${strandsVersion}: S3Storage (from '@strands-agents/sdk/storage') under SessionManager({ saveLatestOn: 'message' }); per added message saveSnapshot({ isLatest: true }) = one unconditional PutObject of the whole snapshot; a new agent restores with one GetObject`,
      machine: {
        cpu: cpus[0]?.model ?? 'unknown',
        cores: cpus.length,
        platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      },
      loadAverage: { atStart: round3(loadAtStart[0]!), atEnd: round3(os.loadavg()[0]!) },
      node: process.version,
      radosgw: version('radosgw', ['--version']),
      wallTimeSeconds: round3(wallSeconds),
      config: {
        rounds: ROUNDS,
        sizes: SIZES,
        messageBytes: MESSAGE_BYTES,
        samplesPerRound: SAMPLES,
        phaseBudgetMs: PHASE_BUDGET_MS,
        minSamples: MIN_SAMPLES,
        writers: WRITERS,
        appendsPerWriter: PER_WRITER,
        s3Client:
          'one @aws-sdk/client-s3 config for all (bench/support.ts newClient: maxAttempts 1, checksums WHEN_REQUIRED); one client per system per round, shared by its stateless writers and readers; one more per concurrent writer',
        counting:
          'S3 middleware on every client: requests by command; bytes = object bodies (PutObject/UploadPart Body, GetObject ContentLength); per operation = phase total / operations, background work drained before counting',
        satchel:
          'SessionStore(CountingStore(S3Store)) with the production pipeline and AuditLog (bench/support.ts productionSessionStore); background work tracked like lib/server/background.ts',
        satchelHttp:
          'createApp({ config: loadConfig({}), objects: S3Store, allowOpen: true }) behind @hono/node-server on 127.0.0.1 (search indexing on, as in production); stateless = a new app behind the same port',
      },
      units: {
        p50: 'ms',
        p99: 'ms (nearest rank; with fewer than 100 samples, the largest)',
        mean: 'ms',
        requests: 'S3 requests per operation',
        bytesOut: 'object bytes written per operation',
        bytesIn: 'object bytes read per operation',
      },
      medians: summary.medians,
      ratiosSatchelOverStrands: summary.ratios,
      concurrency: { medians: summary.concMedians, ratios: summary.concRatios },
      sustained: {
        what: 'Satchel in process: bytes written per append over many appends from one writer, parts (bases, segments) and background records included; afterSplitBytesPerAppend leaves out the first append, which stores the session created whole as a base; median over rounds',
        appendsPerSize: SUSTAINED,
        medians: sustainedMedians,
      },
      rounds: { sizes, concurrency: conc },
      table: md,
    };
    if (WRITE) {
      writeSections(RESULTS, { peer });
      log(`wrote the peer section of ${path.relative(process.cwd(), RESULTS)}`);
    } else log('smoke run: bench/results.json not written (pass --write)');
    log(
      `wall time ${wallSeconds.toFixed(1)} s; load average ${loadAtStart[0]!.toFixed(2)} at start, ${os.loadavg()[0]!.toFixed(2)} at end (${cpus.length} cores)`,
    );
  } finally {
    await http.sys?.close();
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
