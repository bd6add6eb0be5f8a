/**
 * Search benchmark (`npm run bench` runs it after bench/run.ts; alone: `npm run bench:search`, `-- --quick`).
 * Writes the `search` section of bench/results.json (bench/results.quick.json with --quick).
 *
 * 1. Known-item evaluation over synthetic agent transcripts: each session holds one incident described
 *    with rare words; the query names part of it in other words order. Success@1, @5 and MRR for the
 *    indexed path and for DeepSearch.
 * 2. Search latency at 1,000 and 10,000 sessions against radosgw, and 100,000 on the local folder store:
 *    warm (index in memory) and cold (a new process: manifest and index loaded from storage), the time to
 *    rebuild the index from the session objects, index bytes per session, and the memory the loaded
 *    index holds.
 * 3. The added cost per save: requests and bytes the index writes per append (records), and compaction
 *    amortised over the appends.
 */
import { writeSections } from './results.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SearchEngine } from '../lib/search/engine.js';
import { mapLimit } from '../lib/storage/concurrency.js';
import { listAll } from '../lib/storage/prefix.js';
import type { Message } from '../lib/model/session.js';
import type { SessionStore } from '../lib/sessions/store.js';
import { CountingStore } from '../lib/storage/counting.js';
import { LocalStore } from '../lib/storage/local.js';
import type { ObjectStore } from '../lib/storage/port.js';
import { S3Store } from '../lib/storage/s3.js';
import { startRadosgw, type S3Target } from '../test/support/radosgw.js';
import { appendMessages } from './corpus.js';
import { latency, productionSessionStore, q, setUpProduction } from './support.js';
import { reindex } from '../lib/search/reindex.js';

const QUICK = process.argv.includes('--quick');
const here = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(here, QUICK ? 'results.quick.json' : 'results.json');
const NS = 'bench';
/** `SEARCH_SIZES=100000:local,1000:s3` picks the tiers (default: all). */
const SIZES = process.env.SEARCH_SIZES
  ? process.env.SEARCH_SIZES.split(',').map((t) => ({
      n: Number(t.split(':')[0]),
      store: t.split(':')[1] ?? 's3',
    }))
  : QUICK
    ? [
        { n: 1000, store: 's3' },
        { n: 5000, store: 'local' },
      ]
    : [
        { n: 1000, store: 's3' },
        { n: 10_000, store: 's3' },
        { n: 100_000, store: 'local' },
      ];
const QUERIES = QUICK ? 50 : 200;
const COLD = QUICK ? 5 : 10;

function log(line: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
}

// ---- synthetic transcripts ----

class Rng {
  constructor(private s: number) {}
  next(): number {
    this.s = (this.s * 1664525 + 1013904223) >>> 0;
    return this.s / 2 ** 32;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  /** Zipf-like: index of rank with probability ∝ 1/(rank+1). */
  zipf(n: number): number {
    return Math.min(n - 1, Math.floor(Math.exp(this.next() * Math.log(n + 1)) - 1));
  }
}

const SYL = [
  'ka',
  'lo',
  'mi',
  'ren',
  'sto',
  'vax',
  'qui',
  'ber',
  'tan',
  'dol',
  'zek',
  'pra',
  'nul',
  'fi',
  'gor',
  'hem',
  'jus',
  'wob',
  'cre',
  'yan',
];
/** A vocabulary of pseudo-words (identifiers, hostnames, jargon) drawn Zipf-style: a realistic long tail. */
const VOCAB = Array.from({ length: 60_000 }, (_, i) => {
  const r = new Rng(i + 7);
  const w = Array.from({ length: 2 + r.int(3) }, () => r.pick(SYL)).join('');
  return r.next() < 0.2 ? `${w}_${r.pick(SYL)}${r.int(100)}` : w;
});
const SERVICES = [
  'billing-api',
  'checkout',
  'search-indexer',
  'auth-gateway',
  'ledger',
  'notifier',
  'media-resizer',
  'scheduler',
  'exporter',
  'warehouse-sync',
];
const FAILURES = [
  'ran out of memory',
  'deadlocked on a row lock',
  'timed out talking to the queue',
  'lost its TLS certificate',
  'crashed on a null pointer',
  'filled the disk with logs',
  'leaked file descriptors',
  'hit the rate limit',
];
const COMPONENTS = [
  'redis',
  'postgres',
  'kafka',
  'nginx',
  'envoy',
  'terraform',
  'helm',
  'grafana',
  'sentry',
  'vault',
];

interface Doc {
  task: string;
  messages: Message[];
  /** The known-item query for this session. */
  query: string;
}

function makeDoc(i: number): Doc {
  const r = new Rng(i * 7919 + 1);
  const words = (n: number) =>
    Array.from({ length: n }, () => VOCAB[r.zipf(VOCAB.length)]).join(' ');
  const a = VOCAB[1000 + r.int(59_000)]!;
  const b = VOCAB[1000 + r.int(59_000)]!;
  const svc = r.pick(SERVICES);
  const comp = r.pick(COMPONENTS);
  const fail = r.pick(FAILURES);
  const fact = `The ${svc} deploy failed because ${comp} ${fail} while the ${a} job was migrating ${b} records.`;
  const messages: Message[] = [
    { role: 'system', content: 'You are a careful coding agent. Use the tools.' },
    { role: 'user', content: `Please look at ${svc}: ${words(30)}` },
    ...appendMessages(4, i + 11, 600, 1_000_000),
    { role: 'assistant', content: `Found it. ${fact} ${words(40)}` },
    { role: 'user', content: words(25) },
    { role: 'assistant', content: words(60) },
  ];
  return { task: `Investigate ${svc} incident ${i}`, messages, query: `${b} ${a} ${comp} failure` };
}

// ---- datasets ----

/** Writes n stored sessions straight into the store (a template's stored form, changed per session). */
async function populate(
  objects: ObjectStore,
  n: number,
): Promise<{ seconds: number; docs: Doc[] }> {
  const t0 = performance.now();
  const sessions = productionSessionStore(objects);
  const template = (
    await sessions.create(NS, { task: 'template', messages: [{ role: 'user', content: 'x' }] })
  ).session;
  await sessions.delete(NS, template.id);
  const docs: Doc[] = [];
  const base = Date.now() - n * 1000;
  await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    32,
    async (i) => {
      const d = makeDoc(i);
      docs[i] = d;
      const at = new Date(base + i * 1000).toISOString();
      const id = `s${String(i).padStart(7, '0')}`;
      const stored = {
        ...template,
        id,
        task: d.task,
        messages: d.messages,
        created_at: at,
        updated_at: at,
        turns: 3,
        revision: 1,
        satchel: { writes: [] },
      };
      await objects.put(
        `ns/${NS}/sessions/${id}.json`,
        new TextEncoder().encode(JSON.stringify(stored)),
      );
    },
  );
  return { seconds: (performance.now() - t0) / 1000, docs };
}

function engineFor(objects: ObjectStore): {
  sessions: SessionStore;
  engine: SearchEngine;
  jobs: Promise<unknown>[];
} {
  const sessions = productionSessionStore(objects);
  const engine = new SearchEngine(sessions, null);
  sessions.addListener(engine);
  return { sessions, engine, jobs: [] };
}

function heapBytes(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

async function measureSize(objects: ObjectStore, n: number, store: string) {
  log(`search at ${n} sessions (${store}): populating`);
  const pop = await populate(objects, n);
  log(`  wrote ${n} sessions in ${pop.seconds.toFixed(1)} s; reindexing`);
  const builder = engineFor(objects);
  const r0 = performance.now();
  await reindex(builder.engine, NS);
  const reindexSeconds = (performance.now() - r0) / 1000;
  const keys = await listAll(objects, `ns/${NS}/x/`);
  let indexBytes = 0;
  for (const k of keys) indexBytes += (await objects.get(k))!.body.byteLength;
  log(
    `  reindex ${reindexSeconds.toFixed(1)} s; index ${(indexBytes / 1e6).toFixed(1)} MB in ${keys.length} objects`,
  );

  // Cold: a new process each time (new SessionStore and engine): manifest + index loaded from storage.
  const cold: number[] = [];
  const rng = new Rng(n);
  let memory = 0;
  let segmentMemory = 0;
  for (let i = 0; i < COLD; i++) {
    const before = heapBytes();
    const fresh = engineFor(objects);
    const d = pop.docs[rng.int(n)]!;
    const t = performance.now();
    await fresh.engine.search(NS, d.query, 5, { schedule: (w) => void fresh.jobs.push(w) });
    cold.push(performance.now() - t);
    if (i === 0) {
      memory = heapBytes() - before;
      segmentMemory = fresh.engine.lexical.memoryBytes(NS);
    }
    await Promise.all(fresh.jobs);
  }
  // Warm: one process, index loaded; first pass reads result sessions for snippets, second pass has them cached.
  const warm = engineFor(objects);
  await warm.engine.search(NS, 'warm up', 5, { schedule: (w) => void warm.jobs.push(w) });
  const picks = Array.from({ length: QUERIES }, () => rng.int(n));
  const firstPass: number[] = [];
  const secondPass: number[] = [];
  const rankOnly: number[] = [];
  const found = { at1: 0, at5: 0, rr: 0 };
  for (const pass of [firstPass, secondPass]) {
    for (const i of picks) {
      const t = performance.now();
      const hits = await warm.engine.search(NS, pop.docs[i]!.query, 5, {
        schedule: (w) => void warm.jobs.push(w),
      });
      pass.push(performance.now() - t);
      if (pass === firstPass) {
        const rank = hits.findIndex((h) => h.id === `s${String(i).padStart(7, '0')}`);
        if (rank === 0) found.at1++;
        if (rank >= 0) {
          found.at5++;
          found.rr += 1 / (rank + 1);
        }
      }
    }
  }
  // The same known-item queries with the rare word mistyped (two letters swapped): the index lacks it, so
  // the local embedder's near words (lib/search/words.ts) stand in for it.
  const typo = { at1: 0, at5: 0, rr: 0, ms: [] as number[], mistyped: 0 };
  for (const i of picks) {
    const words = pop.docs[i]!.query.split(' ');
    const w = words[1]!;
    if (w.length < 5 || w[2] === w[3]) continue;
    words[1] = w.slice(0, 2) + w[3] + w[2] + w.slice(4);
    typo.mistyped++;
    const t = performance.now();
    const hits = await warm.engine.search(NS, words.join(' '), 5, {
      schedule: (job) => void warm.jobs.push(job),
    });
    typo.ms.push(performance.now() - t);
    const rank = hits.findIndex((h) => h.id === `s${String(i).padStart(7, '0')}`);
    if (rank === 0) typo.at1++;
    if (rank >= 0) {
      typo.at5++;
      typo.rr += 1 / (rank + 1);
    }
  }
  // Ranking every match, with no top-k cut (the search path keeps the best 100): manifest view and index
  // resolution cached in process, no snippets. An upper bound of the ranking inside a search.
  const entries = (await warm.sessions.manifest.view(NS)).entries;
  const { rankLexical } = await import('../lib/search/engine.js');
  const { queryTokens } = await import('../lib/search/tokenize.js');
  for (const i of picks) {
    const t = performance.now();
    const res = await warm.engine.lexical.resolve(NS, entries, false, () => undefined);
    rankLexical(res, queryTokens(pop.docs[i]!.query));
    rankOnly.push(performance.now() - t);
  }
  // DeepSearch on the same queries (a sample: it reads every session).
  const deepPicks = picks.slice(0, n >= 100_000 ? 0 : n >= 10_000 ? 5 : 20);
  const deep = { at1: 0, at5: 0, rr: 0, ms: [] as number[] };
  const { deepSearch } = await import('../lib/search/engine.js');
  for (const i of deepPicks) {
    const t = performance.now();
    const hits = await deepSearch(warm.sessions, NS, entries, pop.docs[i]!.query, 5);
    deep.ms.push(performance.now() - t);
    const rank = hits.findIndex((h) => h.id === `s${String(i).padStart(7, '0')}`);
    if (rank === 0) deep.at1++;
    if (rank >= 0) {
      deep.at5++;
      deep.rr += 1 / (rank + 1);
    }
  }
  await Promise.all(warm.jobs);
  const out = {
    sessions: n,
    store: store === 's3' ? 'radosgw (S3)' : 'local folder store',
    populate: q(pop.seconds, 's', 1),
    reindex: q(reindexSeconds, 's', 1),
    indexBytes: q(indexBytes, 'bytes', 0),
    indexBytesPerSession: q(indexBytes / n, 'bytes', 0),
    indexObjects: keys.length,
    loadedMemory: q(
      memory,
      'bytes: heap + array buffers held after one cold search (manifest view, index, caches), gc before and after',
      0,
    ),
    indexSegmentsMemory: q(
      segmentMemory,
      'bytes: the loaded lexical segments, estimated by LexSegment.memoryBytes',
      0,
    ),
    searchCold: latency(cold),
    searchWarmFirstPass: latency(firstPass),
    searchWarmSecondPass: latency(secondPass),
    rankingOnly: latency(rankOnly),
    knownItem: {
      queries: picks.length,
      successAt1: q(found.at1 / picks.length, 'fraction', 3),
      successAt5: q(found.at5 / picks.length, 'fraction', 3),
      mrr: q(found.rr / picks.length, '', 3),
    },
    knownItemMistyped: {
      how: "the query's rare word with two letters swapped; warm, snippets cached",
      queries: typo.mistyped,
      successAt1: q(typo.at1 / Math.max(1, typo.mistyped), 'fraction', 3),
      successAt5: q(typo.at5 / Math.max(1, typo.mistyped), 'fraction', 3),
      mrr: q(typo.rr / Math.max(1, typo.mistyped), '', 3),
      latency: latency(typo.ms),
    },
    deepSearch:
      deepPicks.length === 0
        ? 'not measured at this size: each query reads up to every session object'
        : {
            queries: deepPicks.length,
            successAt1: q(deep.at1 / deepPicks.length, 'fraction', 3),
            successAt5: q(deep.at5 / deepPicks.length, 'fraction', 3),
            mrr: q(deep.rr / deepPicks.length, '', 3),
            latency: latency(deep.ms),
          },
  };
  log(
    `  cold p50 ${out.searchCold.p50.value} ms, warm p50 ${out.searchWarmFirstPass.p50.value} / ${out.searchWarmSecondPass.p50.value} ms (ranking ${out.rankingOnly.p50.value} ms); ` +
      `known-item s@1 ${out.knownItem.successAt1.value} (mistyped ${out.knownItemMistyped.successAt1.value}, p50 ${out.knownItemMistyped.latency.p50.value} ms), DeepSearch s@1 ${typeof out.deepSearch === 'string' ? '-' : out.deepSearch.successAt1.value}; memory ${(memory / 1e6).toFixed(1)} MB`,
  );
  return out;
}

/** Index upkeep per save: what the search listener writes for appends, compaction included. */
async function saveCost(objects: ObjectStore) {
  const counting = new CountingStore(objects);
  const sessions = productionSessionStore(counting);
  const engine = new SearchEngine(sessions, null);
  sessions.addListener(engine);
  const jobs: Promise<unknown>[] = [];
  const ids = (await sessions.list(NS, { limit: 100 })).sessions.map((s) => s.id);
  const appends = QUICK ? 200 : 1000;
  counting.reset();
  const t0 = performance.now();
  for (let i = 0; i < appends; i++) {
    await sessions.append(
      NS,
      ids[i % ids.length]!,
      { messages: appendMessages(1, 5000 + i, 600, 1_000_000) },
      undefined,
      { schedule: (w) => jobs.push(w) },
    );
  }
  await Promise.all(jobs);
  const seconds = (performance.now() - t0) / 1000;
  const c = counting.reset();
  const indexPuts = Object.entries(c.putsByKind)
    .filter(([k]) => k.startsWith('x'))
    .reduce((s, [, v]) => s + v, 0);
  const indexBytes = Object.entries(c.writtenByKind)
    .filter(([k]) => k.startsWith('x'))
    .reduce((s, [, v]) => s + v, 0);
  return {
    appends,
    seconds: q(seconds, 's', 1),
    indexPutsPerAppend: q(indexPuts / appends, 'PUTs (records and compaction segments/roots)', 3),
    indexBytesPerAppend: q(indexBytes / appends, 'bytes', 0),
    byKind: { puts: c.putsByKind, bytes: c.writtenByKind },
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  await setUpProduction();
  const rgw: S3Target = await startRadosgw({
    memstoreBytes: 6 * 1024 ** 3,
    bucket: 'satchel-search-bench',
    log: (l) => log(l),
  });
  const sizes = [];
  let cost;
  try {
    for (const { n, store } of SIZES) {
      let objects: ObjectStore;
      let dir: string | undefined;
      if (store === 's3') {
        objects = new S3Store({
          bucket: rgw.bucket,
          endpoint: rgw.endpoint,
          region: rgw.region,
          forcePathStyle: true,
          accessKeyId: rgw.accessKeyId,
          secretAccessKey: rgw.secretAccessKey,
          prefix: `search-${n}-${Date.now()}/`,
        });
      } else {
        dir = mkdtempSync(path.join(os.tmpdir(), 'satchel-search-bench-'));
        objects = new LocalStore(dir);
      }
      sizes.push(await measureSize(objects, n, store));
      if (store === 's3' && n === SIZES.filter((s) => s.store === 's3').at(-1)!.n) {
        log(`  added cost per save at ${n} sessions`);
        cost = { sessions: n, ...(await saveCost(objects)) };
        log(
          `  ${cost.indexPutsPerAppend.value} index PUTs and ${cost.indexBytesPerAppend.value} bytes per append`,
        );
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await rgw.stop();
  }
  // With SEARCH_SIZES, only the tiers run are replaced; the others (and their date) stay as measured.
  let previous: {
    sizes?: { sessions: number; store: string; date?: string }[];
    addedCostPerSave?: unknown;
  } = {};
  try {
    previous =
      (JSON.parse(readFileSync(RESULTS, 'utf8')) as { search?: typeof previous }).search ?? {};
  } catch {
    previous = {};
  }
  const date = new Date(started).toISOString();
  const measured = sizes.map((t) => ({ ...t, date, loadAverageAfter: os.loadavg()[0] }));
  const kept = process.env.SEARCH_SIZES
    ? (previous.sizes ?? []).filter(
        (p) => !measured.some((m) => m.sessions === p.sessions && m.store === p.store),
      )
    : [];
  writeSections(RESULTS, {
    search: {
      command: QUICK
        ? 'npm run bench:search -- --quick'
        : 'npm run bench (bench/search.ts); tiers re-run alone with SEARCH_SIZES=<n>:<store> npm run bench:search',
      machine: { cores: os.cpus().length },
      embeddings:
        "none (the default without SATCHEL_EMBEDDINGS_URL: lexical, with the local embedder's near words)",
      sizes: [...kept, ...measured].sort((a, b) => a.sessions - b.sessions),
      addedCostPerSave: cost ?? previous.addedCostPerSave,
    },
  });
  log(`wrote ${path.relative(process.cwd(), RESULTS)} (search section)`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
