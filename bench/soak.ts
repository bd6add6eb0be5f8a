/**
 * `npm run soak` (not in CI): SOAK_MINUTES (default 10) of mixed traffic against a real server
 * (functions/node.ts in its own process, SATCHEL_STORAGE=s3 on radosgw started here, access log on) at the
 * machine's capacity: SOAK_CONCURRENCY (default 16) closed-loop clients over HTTP on loopback. Every 30 s:
 * requests, errors, the server's RSS, JS heap and external memory (bench/soak-memory.cjs, preloaded) and
 * p50/p99 per route in that window. At the end: the same over the
 * whole run, written to bench/results.json under "soak" (the file is read, the key set, the file written).
 *
 * An error is any answer other than the one the operation expects (a 5xx, a lost write, a 404 for a session
 * this client made), or a server log line at error level. Targets (issue 12): zero errors, RSS flat after
 * warm-up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRadosgw, type S3Target } from '../test/support/radosgw.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 16);
const WINDOW_MS = 30_000;
const DEVICES = ['laptop', 'phone', 'ci', 'desk'];
const NAMESPACES = ['soak-a', 'soak-b'];
const token = (ns: string, device: string) => `tok_${ns}_${device}_soak_0123456789`;
/** Sessions a client keeps alive; past it, it deletes its oldest, so the data set stays bounded. */
const SESSIONS_PER_CLIENT = 12;

/** The operations and their share of the traffic (weights). */
const MIX = [
  ['append', 35],
  ['get', 20],
  ['list', 12],
  ['create', 6],
  ['delete', 4],
  ['continue', 5],
  ['search', 10],
  ['health', 3],
  ['audit', 5],
] as const;
type Op = (typeof MIX)[number][0];

interface Sample {
  route: string;
  ms: number;
}

function log(line: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
}

/** functions/node.ts in its own process; resolves once it listens. Its log lines are counted by level. */
async function startServer(
  s3: S3Target,
  levels: Record<string, number>,
  errorLines: string[],
  memory: Memory,
) {
  const child = spawn(
    process.execPath,
    ['--require', './bench/soak-memory.cjs', '--import', 'tsx', 'functions/node.ts'],
    {
      cwd: path.join(here, '..'),
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        SATCHEL_LOG: 'json',
        SATCHEL_STORAGE: 's3',
        S3_ENDPOINT: s3.endpoint,
        S3_REGION: s3.region,
        S3_BUCKET: s3.bucket,
        S3_PREFIX: `soak-${Date.now()}/`,
        S3_FORCE_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: s3.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
        SATCHEL_TOKENS: NAMESPACES.flatMap((ns) =>
          DEVICES.map((d) => `${ns}/${d}=${token(ns, d)}`),
        ).join(','),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise<{ url: string; child: ChildProcess }>((resolve, reject) => {
    let pending = '';
    let early = '';
    const onLines = (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (early.length < 10_000) early += line + '\n';
        const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(line);
        if (m) resolve({ url: m[1]!, child });
        let level = 'text';
        try {
          const parsed = JSON.parse(line) as { level?: string; soak_memory?: Memory };
          level = parsed.level ?? 'text';
          if (parsed.soak_memory) Object.assign(memory, parsed.soak_memory);
        } catch {
          // not a log line
        }
        levels[level] = (levels[level] ?? 0) + 1;
        if ((level === 'error' || level === 'text') && errorLines.length < 20)
          errorLines.push(line.slice(0, 300));
      }
    };
    child.stdout!.on('data', onLines);
    child.stderr!.on('data', onLines);
    child.on('exit', (code) => reject(new Error(`server exited (${code}):\n${early}`)));
  });
}

/** The server's last reported memory (bench/soak-memory.cjs), in bytes. */
interface Memory {
  heap: number;
  external: number;
  buffers: number;
}

const mb = (bytes: number) => Math.round(bytes / 104_857.6) / 10;

/** The server's resident set, from /proc (Linux). */
function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 102.4) / 10 : NaN;
  } catch {
    return NaN;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function byRoute(samples: Sample[]) {
  const groups = new Map<string, number[]>();
  for (const s of samples) {
    const g = groups.get(s.route) ?? [];
    g.push(s.ms);
    groups.set(s.route, g);
  }
  const out: Record<string, { n: number; p50_ms: number; p99_ms: number }> = {};
  for (const [route, values] of [...groups].sort()) {
    values.sort((a, b) => a - b);
    out[route] = {
      n: values.length,
      p50_ms: Math.round(percentile(values, 50) * 10) / 10,
      p99_ms: Math.round(percentile(values, 99) * 10) / 10,
    };
  }
  return out;
}

/** One closed-loop client: a device of a namespace with its own sessions. */
async function client(
  url: string,
  i: number,
  until: number,
  record: (s: Sample) => void,
  fail: (what: string) => void,
) {
  const ns = NAMESPACES[i % NAMESPACES.length]!;
  const device = DEVICES[Math.floor(i / NAMESPACES.length) % DEVICES.length]!;
  const auth = { authorization: `Bearer ${token(ns, device)}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const mine: string[] = [];
  const total = MIX.reduce((n, [, w]) => n + w, 0);
  let seq = 0;
  const pick = (): Op => {
    let r = Math.random() * total;
    for (const [op, w] of MIX) if ((r -= w) < 0) return op;
    return 'get';
  };
  const call = async (
    route: string,
    method: string,
    pathname: string,
    expect: number[],
    init: RequestInit = {},
  ): Promise<Response | null> => {
    const started = performance.now();
    try {
      const res = await fetch(`${url}${pathname}`, { method, ...init });
      const body = await res.arrayBuffer();
      record({ route: `${method} ${route}`, ms: performance.now() - started });
      if (!expect.includes(res.status)) {
        fail(`${method} ${route} → ${res.status} ${new TextDecoder().decode(body).slice(0, 200)}`);
        return null;
      }
      return new Response(res.status === 204 ? null : body, {
        status: res.status,
        headers: res.headers,
      });
    } catch (err) {
      fail(`${method} ${route} → ${(err as Error).message}`);
      return null;
    }
  };
  const content = (n: number) =>
    `step ${n}: ran the tests, ${'the build log said nothing interesting '.repeat(1 + (n % 20))}`;

  while (Date.now() < until) {
    const op = mine.length === 0 ? 'create' : pick();
    const id = mine[Math.floor(Math.random() * mine.length)];
    switch (op) {
      case 'create': {
        const res = await call('/v1/sessions', 'POST', '/v1/sessions', [201], {
          headers: json,
          body: JSON.stringify({
            task: `soak task ${i}-${seq++}: refactor the parser`,
            messages: [
              { role: 'system', content: 'You are a careful coding agent.' },
              { role: 'user', content: 'Refactor the parser and keep the tests green.' },
            ],
          }),
        });
        if (res) mine.push(((await res.json()) as { id: string }).id);
        if (mine.length > SESSIONS_PER_CLIENT) {
          const old = mine.shift()!;
          await call('/v1/sessions/:id', 'DELETE', `/v1/sessions/${old}`, [204], {
            headers: auth,
          });
        }
        break;
      }
      case 'delete': {
        if (mine.length < 4) break;
        const old = mine.shift()!;
        await call('/v1/sessions/:id', 'DELETE', `/v1/sessions/${old}`, [204], { headers: auth });
        break;
      }
      case 'append':
        await call('/v1/sessions/:id/messages', 'POST', `/v1/sessions/${id}/messages`, [200], {
          headers: { ...json, 'idempotency-key': `soak-${i}-${seq++}` },
          body: JSON.stringify({
            messages: [
              { role: 'assistant', content: content(seq) },
              { role: 'user', content: `and now step ${seq}` },
            ],
          }),
        });
        break;
      case 'get':
        await call('/v1/sessions/:id', 'GET', `/v1/sessions/${id}`, [200], { headers: auth });
        break;
      case 'list':
        await call('/v1/sessions', 'GET', '/v1/sessions?limit=20', [200], { headers: auth });
        break;
      case 'continue':
        await call('/v1/sessions/:id/continue', 'POST', `/v1/sessions/${id}/continue`, [200], {
          headers: json,
          body: JSON.stringify({ message: `continue with step ${seq++}` }),
        });
        break;
      case 'search':
        await call('/v1/session_search', 'POST', '/v1/session_search', [200], {
          headers: json,
          body: JSON.stringify({ action: 'search', query: 'parser build log', limit: 5 }),
        });
        break;
      case 'audit':
        await call('/v1/sessions/:id/audit', 'GET', `/v1/sessions/${id}/audit`, [200], {
          headers: auth,
        });
        break;
      case 'health':
        await call('/v1/health', 'GET', '/v1/health', [200]);
        break;
    }
  }
}

async function main() {
  const started = Date.now();
  log(`soak: ${MINUTES} min, ${CONCURRENCY} clients; starting radosgw`);
  const s3 = await startRadosgw({ log: () => undefined });
  const levels: Record<string, number> = {};
  const errorLines: string[] = [];
  const memory: Memory = { heap: NaN, external: NaN, buffers: NaN };
  const { url, child } = await startServer(s3, levels, errorLines, memory);
  log(`server (functions/node.ts, SATCHEL_STORAGE=s3) at ${url}, pid ${child.pid}`);
  const all: Sample[] = [];
  let window: Sample[] = [];
  const errors: string[] = [];
  let errorCount = 0;
  const record = (s: Sample) => {
    all.push(s);
    window.push(s);
  };
  const fail = (what: string) => {
    errorCount++;
    if (errors.length < 50) errors.push(what);
  };
  const samples: {
    at_s: number;
    requests: number;
    rps: number;
    errors: number;
    rss_mb: number;
    /** The JS heap in use, and memory of buffers outside it (external includes array buffers). */
    heap_mb: number;
    external_mb: number;
    routes: ReturnType<typeof byRoute>;
  }[] = [];
  const t0 = Date.now();
  const until = t0 + MINUTES * 60_000;
  let errorsBefore = 0;
  let errorLinesBefore = 0;
  let lastTick = t0;
  const tick = () => {
    const w = window;
    window = [];
    const now = Date.now();
    const sample = {
      at_s: Math.round((now - t0) / 1000),
      requests: w.length,
      rps: Math.round((w.length / (now - lastTick)) * 1000),
      errors: errorCount - errorsBefore + (levels.error ?? 0) - errorLinesBefore,
      rss_mb: rssMb(child.pid!),
      heap_mb: mb(memory.heap),
      external_mb: mb(memory.external),
      routes: byRoute(w),
    };
    lastTick = now;
    errorsBefore = errorCount;
    errorLinesBefore = levels.error ?? 0;
    samples.push(sample);
    const worst = Object.entries(sample.routes)
      .map(([r, v]) => `${r.replace(' /v1', ' ')} ${v.p50_ms}/${v.p99_ms}`)
      .join(' · ');
    log(
      `${sample.at_s}s: ${sample.rps} req/s, ${sample.errors} errors, RSS ${sample.rss_mb} MB (heap ${sample.heap_mb}, external ${sample.external_mb}); p50/p99 ms: ${worst}`,
    );
  };
  const timer = setInterval(tick, WINDOW_MS);
  const load1Before = os.loadavg()[0]!;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, (_, i) => client(url, i, until, record, fail)),
  );
  clearInterval(timer);
  // The last clients finish after the end; a window of a few seconds says nothing of its own.
  if (Date.now() - lastTick > 5000) tick();
  const seconds = (Date.now() - t0) / 1000;
  child.kill('SIGTERM');
  await s3.stop();

  // RSS after warm-up (the first minute) should be flat: compare the first and last thirds of the rest.
  const warm = samples.filter((s) => s.at_s > 60 && Number.isFinite(s.rss_mb));
  const third = Math.max(1, Math.floor(warm.length / 3));
  const mean = (xs: typeof warm, of: (s: (typeof warm)[number]) => number = (s) => s.rss_mb) =>
    Math.round((xs.reduce((n, s) => n + of(s), 0) / (xs.length || 1)) * 10) / 10;
  const rss = {
    after_warmup_first_third_mb: mean(warm.slice(0, third)),
    last_third_mb: mean(warm.slice(-third)),
    max_mb: Math.max(...samples.map((s) => s.rss_mb)),
    // What of it is the JS heap and buffers: growth of RSS alone is the allocator's, not held objects.
    heap_first_third_mb: mean(warm.slice(0, third), (s) => s.heap_mb),
    heap_last_third_mb: mean(warm.slice(-third), (s) => s.heap_mb),
    external_first_third_mb: mean(warm.slice(0, third), (s) => s.external_mb),
    external_last_third_mb: mean(warm.slice(-third), (s) => s.external_mb),
  };
  const soak = {
    at: new Date().toISOString(),
    command: `SOAK_MINUTES=${MINUTES} SOAK_CONCURRENCY=${CONCURRENCY} npm run soak`,
    machine: {
      cpus: os.cpus().length,
      load1_before: load1Before,
      load1_after: os.loadavg()[0]!,
      node: process.version,
    },
    setup:
      'radosgw (memstore) and the Satchel server (functions/node.ts, SATCHEL_STORAGE=s3, SATCHEL_LOG=json ' +
      'read by this process) in their own processes on this machine; closed-loop clients over loopback HTTP, ' +
      `2 namespaces × 4 devices, each keeping ≤ ${SESSIONS_PER_CLIENT} sessions; mix (weights): ` +
      MIX.map(([op, w]) => `${op} ${w}`).join(', '),
    minutes: MINUTES,
    concurrency: CONCURRENCY,
    seconds: Math.round(seconds),
    requests: all.length,
    rps: Math.round(all.length / seconds),
    errors: errorCount + (levels.error ?? 0),
    error_examples: [...errors.slice(0, 10), ...errorLines.slice(0, 10)],
    /** By level; `info` holds one access line per request (and the start banner). */
    server_log_lines: levels,
    rss,
    routes: byRoute(all),
    every_30s: samples,
  };
  const file = path.join(here, 'results.json');
  const results = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  results.soak = soak;
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  log(
    `done in ${Math.round((Date.now() - started) / 1000)} s: ${soak.requests} requests (${soak.rps}/s), ` +
      `${soak.errors} errors, RSS ${rss.after_warmup_first_third_mb} → ${rss.last_third_mb} MB (max ${rss.max_mb}), ` +
      `heap ${rss.heap_first_third_mb} → ${rss.heap_last_third_mb} MB, ` +
      `external ${rss.external_first_third_mb} → ${rss.external_last_third_mb} MB; ` +
      `bench/results.json "soak" written`,
  );
  for (const [route, v] of Object.entries(soak.routes))
    log(`  ${route.padEnd(34)} n=${v.n} p50 ${v.p50_ms} ms  p99 ${v.p99_ms} ms`);
  if (soak.errors > 0) {
    for (const e of soak.error_examples) log(`  error: ${e}`);
    process.exitCode = 1;
  }
}

await main();
