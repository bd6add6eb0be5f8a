/**
 * Import benchmark (`npm run bench:import`; `-- --quick` is a smoke run of 100 sessions that writes
 * nothing). Issue 6's target: import 1,000 odek sessions of 50 KB into radosgw,
 * measured in sessions/s.
 *
 * Starts its own radosgw, then the Satchel server as its own process (functions/node.ts, as `npm start`
 * runs it, with SATCHEL_STORAGE=s3 on that radosgw), writes 1,000 odek session files of about 50 KB
 * (test/support/odek-files.ts: tool-using transcripts) to a temporary folder, and runs the CLI's import
 * (lib/cli, `satchel import <folder>`, in this process: the command's code without its start-up) against
 * the server over HTTP:
 *   1. the first import (every session created: save pipeline, audit record, search record), at the
 *      default concurrency of 8, then at 1 and 16 (each into its own namespace);
 *   2. the same import again at 8: every session compared and found unchanged (idempotency's cost).
 * After each first import the namespace is listed to check that all 1,000 sessions are there, and a
 * sample is compared with its file.
 * Writes bench/results.import.json and the `import` section of bench/results.json.
 */
import { writeSections } from './results.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SatchelClient } from '../lib/client/index.js';
import { main } from '../lib/cli/main.js';
import { sameJson } from '../lib/odek/match.js';
import { startRadosgw, type S3Target } from '../test/support/radosgw.js';
import { syntheticSession } from '../test/support/odek-files.js';

const QUICK = process.argv.includes('--quick');
const here = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(here, 'results.json');
const OWN_RESULTS = path.join(here, 'results.import.json');
const SESSIONS = QUICK ? 100 : 1000;
const SESSION_BYTES = 50_000;
const RUNS = [
  { name: 'first', concurrency: 8, ns: 'c8' },
  { name: 'first', concurrency: 1, ns: 'c1' },
  { name: 'first', concurrency: 16, ns: 'c16' },
  { name: 'again', concurrency: 8, ns: 'c8' },
] as const;
const TOKENS: Record<string, string> = {
  c1: 'tok_bench_import_c1_0123',
  c8: 'tok_bench_import_c8_0123',
  c16: 'tok_bench_import_c16_012',
};

function log(line: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
}

/** functions/node.ts in its own process on a free loopback port; resolves once it listens. */
async function startServer(s3: S3Target): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'functions/node.ts'], {
    cwd: path.join(here, '..'),
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SATCHEL_STORAGE: 's3',
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: s3.region,
      S3_BUCKET: s3.bucket,
      S3_PREFIX: `import-${Date.now()}/`,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      SATCHEL_TOKENS: Object.entries(TOKENS)
        .map(([ns, t]) => `${ns}/bench=${t}`)
        .join(','),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (m) resolve({ url: m[1]!, child });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.on('exit', (code) =>
      reject(new Error(`server exited (${code}) before listening:\n${output}`)),
    );
  });
}

interface RunResult {
  run: string;
  concurrency: number;
  sessions: number;
  seconds: number;
  sessionsPerSecond: number;
  megabytesPerSecond: number;
  report: { created: number; unchanged: number; replaced: number; failed: number };
}

async function importOnce(
  url: string,
  dir: string,
  run: (typeof RUNS)[number],
  totalBytes: number,
): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const started = performance.now();
  const code = await main(['import', dir, '--json', '--concurrency', String(run.concurrency)], {
    stdout: { write: (s: string) => void (stdout += s) },
    stderr: { write: (s: string) => void (stderr += s) },
    env: { SATCHEL_URL: url, SATCHEL_TOKEN: TOKENS[run.ns] },
  });
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`import exited ${code}: ${stderr}\n${stdout.slice(0, 2000)}`);
  const { created, unchanged, replaced, failed } = JSON.parse(stdout) as RunResult['report'];
  const expected =
    run.name === 'first'
      ? { created: SESSIONS, unchanged: 0 }
      : { created: 0, unchanged: SESSIONS };
  if (created !== expected.created || unchanged !== expected.unchanged || failed !== 0) {
    throw new Error(
      `unexpected report for ${run.name} at ${run.concurrency}: ${JSON.stringify({ created, unchanged, replaced, failed })}`,
    );
  }
  return {
    run: run.name,
    concurrency: run.concurrency,
    sessions: SESSIONS,
    seconds: round(seconds, 2),
    sessionsPerSecond: round(SESSIONS / seconds, 1),
    megabytesPerSecond: round(totalBytes / 1e6 / seconds, 2),
    report: { created, unchanged, replaced, failed },
  };
}

/** Every session is listed, and a sample reads back as its file (messages, task, model). */
async function check(
  url: string,
  ns: string,
  files: ReturnType<typeof syntheticSession>[],
): Promise<void> {
  const client = new SatchelClient({ url, token: TOKENS[ns] });
  let listed = 0;
  for await (const _ of client.listAll()) listed++;
  if (listed !== SESSIONS)
    throw new Error(`namespace ${ns} lists ${listed} sessions, not ${SESSIONS}`);
  for (const i of [0, Math.floor(SESSIONS / 2), SESSIONS - 1]) {
    const { session } = await client.get(files[i]!.id);
    if (
      !sameJson(session.messages, files[i]!.messages) ||
      session.task !== files[i]!.task ||
      session.model !== files[i]!.model
    ) {
      throw new Error(`session ${files[i]!.id} does not read back as its file`);
    }
  }
}

function round(n: number, digits: number): number {
  return Number(n.toFixed(digits));
}

async function mainBench(): Promise<void> {
  const wallStart = Date.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'satchel-import-bench-'));
  let rgw: S3Target | undefined;
  let server: ChildProcess | undefined;
  try {
    log(`writing ${SESSIONS} odek session files of about ${SESSION_BYTES / 1000} KB`);
    const files = Array.from({ length: SESSIONS }, (_, i) =>
      syntheticSession(i + 1, SESSION_BYTES),
    );
    let totalBytes = 0;
    for (const f of files) {
      const file = path.join(dir, `${f.id}.json`);
      writeFileSync(file, JSON.stringify(f));
      totalBytes += statSync(file).size;
    }
    log(
      `files: ${(totalBytes / 1e6).toFixed(1)} MB, ${Math.round(totalBytes / SESSIONS)} bytes each on average`,
    );

    log('starting radosgw');
    const rgwStart = performance.now();
    rgw = await startRadosgw({ bucket: 'satchel-bench-import', log: (l) => log(l) });
    const rgwStartSeconds = (performance.now() - rgwStart) / 1000;
    const started = await startServer(rgw);
    server = started.child;
    log(`server (functions/node.ts, SATCHEL_STORAGE=s3) at ${started.url}`);

    const runs: RunResult[] = [];
    for (const run of RUNS) {
      log(`import (${run.name}) of ${SESSIONS} at concurrency ${run.concurrency}`);
      const loadBefore = os.loadavg()[0]!;
      const r = await importOnce(started.url, dir, run, totalBytes);
      log(
        `  ${r.seconds} s: ${r.sessionsPerSecond} sessions/s, ${r.megabytesPerSecond} MB/s (load average ${loadBefore.toFixed(1)} → ${os.loadavg()[0]!.toFixed(1)})`,
      );
      runs.push(r);
      if (run.name === 'first') await check(started.url, run.ns, files);
    }

    const headline = runs.find((r) => r.run === 'first' && r.concurrency === 8)!;
    const section = {
      date: new Date().toISOString(),
      command: `npm run bench:import${QUICK ? ' -- --quick' : ''}`,
      quick: QUICK,
      machine: {
        cores: os.cpus().length,
        loadAverage: round(os.loadavg()[0]!, 2),
        node: process.version,
      },
      setup:
        'radosgw (memstore) and the Satchel server (functions/node.ts, SATCHEL_STORAGE=s3) in their own processes on this machine; ' +
        'the CLI import (lib/cli import command) in the benchmark process, over HTTP on loopback',
      radosgwStartSeconds: round(rgwStartSeconds, 1),
      sessions: SESSIONS,
      fileBytesAverage: Math.round(totalBytes / SESSIONS),
      fileBytesTotal: totalBytes,
      target:
        'Import of 1,000 odek sessions (50 KB each) into radosgw: measured and reported (sessions/s)',
      sessionsPerSecond: headline.sessionsPerSecond,
      runs,
      wallSeconds: Math.round((Date.now() - wallStart) / 1000),
    };
    if (!QUICK) {
      writeFileSync(OWN_RESULTS, JSON.stringify(section, null, 2) + '\n');
      writeSections(RESULTS, { import: section });
    }
    log(
      `import of ${SESSIONS} sessions: ${headline.sessionsPerSecond} sessions/s at concurrency 8${QUICK ? ' (quick: nothing written)' : '; wrote bench/results.import.json and the import section of bench/results.json'}`,
    );
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await rgw?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

mainBench().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
