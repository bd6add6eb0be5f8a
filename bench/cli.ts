// `npm run bench:cli`: how long the `satchel` command takes to start, as a user waits for it. Builds
// dist/cli.js, then times whole processes (spawn to exit) of `node bin/satchel.js --help` (what the bin
// link runs) and `npx --no-install satchel --help` (npx's own lookup added), against `node -e 0` (Node's
// own start on this machine) and the old way (lib/cli through tsx). Writes the `cli` section of
// bench/results.json.
import { spawnSync } from 'node:child_process';
import { loadavg, cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCli } from '../scripts/build.js';
import { writeSections } from './results.js';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const RUNS = Number(process.env.CLI_RUNS ?? 25);
/** The start-up budget from issue 16: `satchel --help` under 300 ms. */
const TARGET_MS = 300;

/** Wall time of one process, spawn to exit, in ms. */
function once(command: string, args: string[]): number {
  const start = performance.now();
  const r = spawnSync(command, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - start;
  if (r.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** p50 and p90 of `runs` timed runs, after one uncounted run (disk cache). */
function measure(
  command: string,
  args: string[],
  runs = RUNS,
): { p50: number; p90: number; min: number; runs: number } {
  once(command, args);
  const times = Array.from({ length: runs }, () => once(command, args)).sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    p50: round(quantile(times, 0.5)),
    p90: round(quantile(times, 0.9)),
    min: round(times[0]!),
    runs,
  };
}

const loadStart = loadavg().map((n) => Math.round(n * 100) / 100);
const bundle = await buildCli();
const results = {
  nodeAlone: measure('node', ['-e', '0']),
  satchelHelp: measure('node', ['bin/satchel.js', '--help']),
  npxSatchelHelp: measure('npx', ['--no-install', 'satchel', '--help'], Math.min(RUNS, 10)),
  tsxBefore: measure(
    'node',
    [
      '--import',
      'tsx',
      '-e',
      "const m = await import('./lib/cli/main.ts'); process.exitCode = await m.main(['--help'], { stdout: { write() {} }, stderr: process.stderr, env: {} })",
    ],
    Math.min(RUNS, 10),
  ),
};
const section = {
  date: new Date().toISOString(),
  command: 'npm run bench:cli (bench/cli.ts)',
  machine: {
    cores: cpus().length,
    loadAverage: { start: loadStart, end: loadavg().map((n) => Math.round(n * 100) / 100) },
    node: process.version,
  },
  bundle: { file: 'dist/cli.js', bytes: (await import('node:fs')).statSync(bundle).size },
  definitions: {
    nodeAlone: '`node -e 0`: Node starting and exiting, the floor',
    satchelHelp:
      '`node bin/satchel.js --help`: what the satchel bin link runs; the budget is 300 ms',
    npxSatchelHelp:
      '`npx --no-install satchel --help`: the same through npx (npx finding the bin adds its own start)',
    tsxBefore:
      'the CLI loaded from TypeScript through tsx, as bin/satchel.js did before the build step',
  },
  wallMs: results,
  target: { satchelHelpP50UnderMs: TARGET_MS, met: results.satchelHelp.p50 < TARGET_MS },
};
writeSections(join(root, 'bench', 'results.json'), { cli: section });

console.log(`satchel start-up, spawn to exit, ${RUNS} runs (load average ${loadStart.join(' ')}):`);
for (const [name, r] of Object.entries(results))
  console.log(
    `  ${name.padEnd(16)} p50 ${r.p50} ms  p90 ${r.p90} ms  (min ${r.min}, ${r.runs} runs)`,
  );
console.log(
  `target: satchel --help p50 under ${TARGET_MS} ms: ${section.target.met ? 'met' : 'NOT met'}`,
);
