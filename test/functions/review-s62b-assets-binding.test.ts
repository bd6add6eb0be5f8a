import { Miniflare } from 'miniflare';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildWorker } from '../../scripts/build.js';

// docs/deploy.md: a wrangler.toml from before 2026-12-07 has `[assets]` without `binding = "ASSETS"`, and
// then `GET /ui` answers a 404 naming that line. It said "deployed without its static assets ([assets])"
// while the assets were served (review s62b), sending the operator to a section that was there.
let script: string;
const started: Miniflare[] = [];

beforeAll(async () => {
  script = await buildWorker(join(mkdtempSync(join(tmpdir(), 'satchel-s62b-')), 'worker-r2.js'), {
    s3: false,
  });
});
afterAll(async () => {
  await Promise.all(started.map((mf) => mf.dispose()));
});

function start(binding: boolean): Miniflare {
  const directory = join(dirname(script), 'assets');
  const mf = new Miniflare({
    scriptPath: script,
    modules: true,
    modulesRoot: dirname(script),
    compatibilityDate: '2026-04-01',
    assets: {
      directory,
      ...(binding ? { binding: 'ASSETS' } : {}),
      routerConfig: { has_user_worker: true },
    },
    r2Buckets: ['BUCKET'],
    bindings: { SATCHEL_TOKENS: 'edge=tok_s62b_0123456789abcdef' },
  });
  started.push(mf);
  return mf;
}

it('a Worker with [assets] but no ASSETS binding says to add the binding; with it, /ui is the page', async () => {
  const unbound = start(false);
  const res = await unbound.dispatchFetch('http://x/ui');
  expect(res.status).toBe(404);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(((await res.json()) as { detail: string }).detail).toContain('binding = "ASSETS"');
  // The assets themselves are served (so "without its static assets" was wrong).
  expect((await unbound.dispatchFetch('http://x/ui/pages.json')).status).toBe(200);
  const bound = await start(true).dispatchFetch('http://x/ui');
  expect(bound.status).toBe(200);
  expect(await bound.text()).toContain('<html');
});
