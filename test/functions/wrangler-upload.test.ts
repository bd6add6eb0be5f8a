import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { buildWorker } from '../../scripts/build.js';

// What `wrangler deploy` uploads, as it counts it (review s56d). With `no_bundle`, wrangler attaches every
// file under the entry's folder that its default module rules match (`*.html` is text) as a module of the
// Worker: with the bundles in `dist/` beside `dist/assets/`, the static `/docs` page (62 KiB) went up in
// the Worker too ("Attaching additional modules: assets/docs.html"), 121,242 B gzip in all, over the R2-only
// budget, while test/functions/worker.test.ts measured the bundle alone. The bundles are in `dist/worker/`
// now. The build is the repository's layout (`npm run build:worker`'s), and the configuration its
// wrangler.toml without the `[build]` command (the build is done); `--dry-run` uploads nothing.
const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'satchel-wrangler-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function dryRun(env: string[]): string {
  return execFileSync(
    join(ROOT, 'node_modules', '.bin', 'wrangler'),
    ['deploy', '--dry-run', '--outdir', join(dir, 'out'), ...env],
    {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        HOME: dir,
        CLOUDFLARE_CF_FETCH_ENABLED: 'false',
        WRANGLER_SEND_METRICS: 'false',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    },
  );
}

it('wrangler deploy uploads each Worker without its static assets as modules; the R2 one within budget', async () => {
  const assets = join(dir, 'dist', 'assets');
  await buildWorker(join(dir, 'dist', 'worker', 'worker-r2.js'), { s3: false, assets });
  await buildWorker(join(dir, 'dist', 'worker', 'worker.js'), { assets });
  const toml = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8');
  writeFileSync(join(dir, 'wrangler.toml'), toml.replace(/^\[build\][\s\S]*?(?=^\[)/m, ''));
  for (const env of [[], ['--env', 's3']]) {
    const out = dryRun(env);
    const total = /Total Upload: [\d.]+ KiB \/ gzip: ([\d.]+) KiB/.exec(out);
    expect(total, out).not.toBeNull();
    expect(out).not.toMatch(/Attaching additional modules/);
    const gzip = Math.round(Number(total![1]) * 1024);
    // The budgets test/functions/worker.test.ts holds the bundles to, as wrangler counts them.
    expect(gzip).toBeLessThan(env.length ? 250_000 : 120_000);
  }
}, 300_000);
