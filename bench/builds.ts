/**
 * `npm run bench:builds`: the deployable bundles' sizes and the Worker's cold start under miniflare.
 *
 * - Sizes: dist/worker/worker.js (R2 + S3), dist/worker/worker-r2.js (R2 only), dist/lambda/index.mjs and its zip, in
 *   bytes and gzip at zlib's default level (what `wrangler deploy` reports as "gzip").
 * - Cold start: `new Miniflare()` with the bundle (R2 binding, tokens set) until the first `/v1/health`
 *   response has been read, RUNS times per bundle, one at a time; also split into "ready" (workerd up,
 *   the script loaded and evaluated) and "first response" (the app built on the first request, plus the
 *   request). A one-line Worker is measured the same way, so the bundle's own share can be told from
 *   starting workerd itself.
 *
 * Writes the `builds` section of bench/results.json (read-modify-write; other sections are left as they are).
 */
import { writeSections } from './results.js';
import { Miniflare } from 'miniflare';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLambda, buildWorker, bundleSize, packLambda } from '../scripts/build.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const here = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(here, 'results.json');
const log = (s: string) => console.log(s);

interface ColdStart {
  total: number;
  ready: number;
  firstResponse: number;
}

async function coldStart(script: string, withApp: boolean): Promise<ColdStart> {
  const t0 = performance.now();
  const mf = new Miniflare({
    scriptPath: script,
    modules: true,
    modulesRoot: path.dirname(script),
    compatibilityDate: '2026-04-01',
    r2Buckets: ['BUCKET'],
    bindings: { SATCHEL_TOKENS: 'bench=tok_bench' },
    // No request.cf lookup on the network: that is miniflare's, not the Worker's.
    cf: false,
  });
  try {
    await mf.ready;
    const t1 = performance.now();
    const res = await mf.dispatchFetch('http://w/v1/health');
    const body = await res.text();
    const t2 = performance.now();
    if (res.status !== 200 || (withApp && !body.includes('"status":"ok"')))
      throw new Error(`health answered ${res.status}: ${body.slice(0, 200)}`);
    return { total: t2 - t0, ready: t1 - t0, firstResponse: t2 - t1 };
  } finally {
    await mf.dispose();
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => ({ value: Math.round(x * 10) / 10, unit: 'ms' });

async function series(name: string, script: string, withApp: boolean) {
  await coldStart(script, withApp); // warm the disk cache and workerd's binary; not counted
  const runs: ColdStart[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await coldStart(script, withApp));
  const of = (k: keyof ColdStart) => runs.map((r) => r[k]);
  const summary = {
    runs: RUNS,
    total: {
      p50: ms(pct(of('total'), 50)),
      p90: ms(pct(of('total'), 90)),
      min: ms(Math.min(...of('total'))),
      max: ms(Math.max(...of('total'))),
    },
    ready: { p50: ms(pct(of('ready'), 50)) },
    firstResponse: { p50: ms(pct(of('firstResponse'), 50)) },
  };
  log(
    `${name.padEnd(22)} cold start p50 ${summary.total.p50.value} ms (p90 ${summary.total.p90.value}, min ${summary.total.min.value}): ready ${summary.ready.p50.value} ms + first response ${summary.firstResponse.p50.value} ms`,
  );
  return summary;
}

const started = Date.now();
const load = loadavg();
const dir = mkdtempSync(join(tmpdir(), 'satchel-bench-builds-'));
const withS3 = await buildWorker(join(dir, 'worker.js'));
const r2Only = await buildWorker(join(dir, 'worker-r2.js'), { s3: false });
const lambdaBundle = await buildLambda(join(dir, 'lambda', 'index.mjs'));
const lambdaZip = packLambda(lambdaBundle, join(dir, 'satchel-lambda.zip'));
const baseline = join(dir, 'baseline.js');
writeFileSync(baseline, "export default { fetch() { return new Response('ok'); } };\n");

const kb = (n: number) => ({ value: n, unit: 'bytes', kib: Math.round((n / 1024) * 10) / 10 });
const sizes = {
  workerWithS3: {
    file: 'dist/worker/worker.js',
    bytes: kb(bundleSize(withS3).bytes),
    gzip: kb(bundleSize(withS3).gzip),
    target: 'gzip under 250 KB',
  },
  workerR2Only: {
    file: 'dist/worker/worker-r2.js',
    bytes: kb(bundleSize(r2Only).bytes),
    gzip: kb(bundleSize(r2Only).gzip),
    target: 'gzip under 120 KB',
  },
  lambda: {
    file: 'dist/lambda/index.mjs',
    bytes: kb(bundleSize(lambdaBundle).bytes),
    zip: kb(readFileSync(lambdaZip).byteLength),
  },
};
for (const [name, s] of Object.entries(sizes)) {
  log(
    `${name.padEnd(22)} ${s.bytes.kib} KiB${'gzip' in s ? `, gzip ${s.gzip.kib} KiB (${s.gzip.value} bytes)` : `, zip ${s.zip.kib} KiB`}`,
  );
}

const coldStarts = {
  workerR2Only: await series('worker-r2.js', r2Only, true),
  workerWithS3: await series('worker.js (R2 binding)', withS3, true),
  oneLineWorker: await series('one-line Worker', baseline, false),
};

const section = {
  date: new Date(started).toISOString(),
  command: 'npm run bench:builds (bench/builds.ts)',
  machine: {
    cores: 2,
    loadAverage: {
      start: load.map((x) => Math.round(x * 100) / 100),
      end: loadavg().map((x) => Math.round(x * 100) / 100),
    },
  },
  sizes,
  coldStart: {
    setup:
      'miniflare ' +
      JSON.parse(
        readFileSync(join(here, '..', 'node_modules', 'miniflare', 'package.json'), 'utf8'),
      ).version +
      ' on this machine: new Miniflare({scriptPath, modules, r2Buckets: [BUCKET], bindings: {SATCHEL_TOKENS}}) until the first GET /v1/health response is read, then dispose; one at a time, after one uncounted run',
    definitions: {
      total: 'new Miniflare() → first /v1/health response read',
      ready: 'new Miniflare() → mf.ready (workerd started, script loaded and evaluated)',
      firstResponse:
        'mf.ready → first /v1/health response read (the app is built on the first request)',
    },
    ...coldStarts,
  },
};

// Read-modify-write, as late as possible: other benchmarks write their own sections of this file.
writeSections(RESULTS, { builds: section });
log(
  `wrote the builds section of bench/results.json (${((Date.now() - started) / 1000).toFixed(0)} s)`,
);
