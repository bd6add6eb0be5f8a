/**
 * `npm run bench:ui`: the session browser in Debian's Chromium (puppeteer-core), against the local server
 * on a temporary folder in open mode (no token, as after `npm start` without SATCHEL_TOKENS).
 *
 * - First paint of /ui with 1,000 sessions: navigation start to the first contentful paint (the shell)
 *   and to the first page of sessions in the table (the number that matters: rows a person can read),
 *   RUNS fresh page loads after one warm-up.
 * - Transcript of a 1 MB session (tool calls with results, long ones folded): navigation start until
 *   the first screenful (the 40 items the client builds at once) and until every message item is in
 *   the page (the rest is built in ~50 ms chunks after the first paint).
 * - Payload: the page, script, stylesheet and icon, bytes and gzip; the R2-only Worker bundle's gzip
 *   (scripts/build.ts, as bench/builds.ts measures it), since the browser ships inside it.
 *
 * Writes the `ui` section of bench/results.json (read-modify-write; other sections are left as they are).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import puppeteer from 'puppeteer-core';
import { buildWorker, bundleSize } from '../scripts/build.js';
import { startSatchelServer } from '../test/support/satchel-server.js';
import { writeSections } from './results.js';

const SESSIONS = Number(process.env.BENCH_UI_SESSIONS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const here = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = join(here, 'results.json');
const log = (s: string) => console.log(s);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => ({ value: Math.round(x * 10) / 10, unit: 'ms' });
const summary = (xs: number[]) => ({
  p50: ms(pct(xs, 50)),
  p90: ms(pct(xs, 90)),
  min: ms(Math.min(...xs)),
  max: ms(Math.max(...xs)),
});

/** Records, in the page's own clock, when a selector first matches (a MutationObserver set before any script runs). */
const watchFor = (selector: string, flag: string) => `
  (() => {
    const check = () => { if (!window['${flag}'] && document.querySelector(${JSON.stringify(selector)})) window['${flag}'] = performance.now(); };
    new MutationObserver(check).observe(document, { childList: true, subtree: true, characterData: true });
  })();`;

async function post(base: string, body: unknown): Promise<string> {
  const res = await fetch(`${base}/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201)
    throw new Error(`create answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return ((await res.json()) as { id: string }).id;
}

/** A session of about `bytes`: user turns, assistant tool calls with JSON arguments, tool results (some long). */
function bigSession(bytes: number) {
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: 'You are a coding agent working in a monorepo.' },
  ];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const result =
      `file ${i}:\n` +
      Array.from(
        { length: i % 5 === 0 ? 60 : 12 },
        (_, l) => `  ${l}: const value${l} = compute(${i}, ${l}); // step output`,
      ).join('\n');
    const group = [
      { role: 'user', content: `Step ${i}: look at module ${i} and tell me what it exports.` },
      {
        role: 'assistant',
        content: '',
        reasoning_content: `Module ${i} is probably in src/m${i}. Read it first.`,
        tool_calls: [
          {
            id: `call_${i}`,
            type: 'function',
            function: {
              name: 'read_file',
              arguments: JSON.stringify({ path: `src/m${i}/index.ts`, lines: [1, 200] }),
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: `call_${i}`, content: result },
      { role: 'assistant', content: `Module ${i} exports value0 to value11; nothing else.` },
    ];
    size += JSON.stringify(group).length;
    messages.push(...group);
  }
  return { task: 'A 1 MB transcript', model: 'bench-model', provider: 'local', messages };
}

const loadAtStart = loadavg()[0];
log(
  `load average at start ${loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')} on ${cpus().length} CPUs`,
);
const server = await startSatchelServer();
const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
try {
  // ---- seed ----
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < SESSIONS) {
        const i = next++;
        await post(server.url, {
          task: `Session ${i}: fix the flaky test in package ${i % 37}`,
          model: 'gpt-bench',
          provider: 'openai',
          messages: [
            { role: 'user', content: `Please look at package ${i % 37}.` },
            { role: 'assistant', content: 'Looking.' },
          ],
        });
      }
    }),
  );
  const big = bigSession(1_000_000);
  const bigId = await post(server.url, big);
  const bigStored = await (await fetch(`${server.url}/v1/sessions/${bigId}`)).text();
  log(
    `seeded ${SESSIONS} sessions and one of ${(bigStored.length / 1e6).toFixed(2)} MB (${big.messages.length} messages) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  // ---- first paint of /ui ----
  const fcp: number[] = [];
  const rows: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await page.evaluateOnNewDocument(watchFor('#rows tr', '__rows'));
    await page.goto(`${server.url}/ui`);
    await page.waitForFunction(
      () => (window as unknown as { __rows?: number }).__rows !== undefined,
      { timeout: 30_000 },
    );
    const got = await page.evaluate(() => ({
      rows: (window as unknown as { __rows: number }).__rows,
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
      count: document.querySelectorAll('#rows tr').length,
    }));
    if (got.count < 1) throw new Error('the list rendered no rows');
    if (run > 0) {
      rows.push(got.rows);
      if (Number.isFinite(got.fcp) && got.fcp > 0) fcp.push(got.fcp);
    }
    await page.close();
  }
  log(
    `/ui with ${SESSIONS} sessions: first contentful paint p50 ${pct(fcp, 50).toFixed(1)} ms; first page of sessions shown p50 ${pct(rows, 50).toFixed(1)} ms (p90 ${pct(rows, 90).toFixed(1)})`,
  );

  // ---- the 1 MB transcript ----
  const transcript: number[] = [];
  const firstScreen: number[] = [];
  const items = big.messages.filter((m) => m.role !== 'tool').length;
  for (let run = 0; run <= Math.min(RUNS, 10); run++) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await page.evaluateOnNewDocument(watchFor(`#messages > li:nth-child(${items})`, '__done'));
    // The first screenful: the client builds 40 items at once, then the rest in ~50 ms chunks.
    await page.evaluateOnNewDocument(watchFor('#messages > li:nth-child(40)', '__first'));
    await page.goto(`${server.url}/ui/sessions/${bigId}`);
    await page.waitForFunction(
      () => (window as unknown as { __done?: number }).__done !== undefined,
      { timeout: 60_000 },
    );
    const got = await page.evaluate(() => {
      const w = window as unknown as { __done: number; __first: number };
      return { done: w.__done, first: w.__first };
    });
    if (run > 0) {
      transcript.push(got.done);
      firstScreen.push(got.first);
    }
    await page.close();
  }
  log(
    `1 MB transcript (${big.messages.length} messages, ${items} items): first screenful (40 items) p50 ${pct(firstScreen, 50).toFixed(1)} ms (p90 ${pct(firstScreen, 90).toFixed(1)}); every message in the page p50 ${pct(transcript, 50).toFixed(1)} ms (p90 ${pct(transcript, 90).toFixed(1)})`,
  );

  // ---- payload ----
  const html = await (await fetch(`${server.url}/ui`)).text();
  const assets = [...html.matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((m) => m[1]!);
  const files: Record<string, { bytes: number; gzip: number }> = {
    '/ui': { bytes: Buffer.byteLength(html), gzip: gzipSync(html).byteLength },
  };
  for (const a of assets) {
    const body = Buffer.from(await (await fetch(server.url + a)).arrayBuffer());
    files[a.replace(/\?.*$/, '')] = { bytes: body.byteLength, gzip: gzipSync(body).byteLength };
  }
  const total = Object.values(files).reduce(
    (acc, f) => ({ bytes: acc.bytes + f.bytes, gzip: acc.gzip + f.gzip }),
    { bytes: 0, gzip: 0 },
  );
  log(
    `page payload: ${(total.bytes / 1024).toFixed(1)} KiB, ${(total.gzip / 1024).toFixed(1)} KiB gzip (budget 60 KB): ${Object.entries(
      files,
    )
      .map(([k, f]) => `${k} ${(f.gzip / 1024).toFixed(1)}`)
      .join(', ')}`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'satchel-bench-ui-'));
  const worker = bundleSize(await buildWorker(join(dir, 'worker-r2.js'), { s3: false }));
  rmSync(dir, { recursive: true, force: true });
  log(
    `R2-only Worker bundle: ${(worker.bytes / 1024).toFixed(1)} KiB, ${(worker.gzip / 1024).toFixed(1)} KiB gzip (target 120 KB)`,
  );

  const chromiumVersion = await browser.version();
  writeSections(RESULTS, {
    ui: {
      at: new Date().toISOString(),
      command: 'npm run bench:ui',
      machine: {
        cpus: cpus().length,
        load: loadavg()[0],
        loadAtStart,
        chromium: chromiumVersion,
        node: process.version,
      },
      setup: `local server (open mode) on a temporary folder, ${SESSIONS} sessions; Chromium headless at 1280x900, a new page per run, ${RUNS} runs after one warm-up; times from navigation start in the page's clock`,
      firstPaint: {
        sessions: SESSIONS,
        firstContentfulPaint: summary(fcp),
        firstPageOfSessions: summary(rows),
        target: ms(300),
      },
      transcript: {
        bytes: Buffer.byteLength(bigStored),
        messages: big.messages.length,
        items,
        firstScreenful: summary(firstScreen),
        allMessagesInPage: summary(transcript),
        target: ms(500),
      },
      payload: { files, total, budgetGzip: 60_000 },
      workerR2: { ...worker, targetGzip: 120 * 1024 },
    },
  });
  log(`wrote the ui section of ${path.relative(process.cwd(), RESULTS)}`);
} finally {
  await browser.close();
  await server.close();
}
