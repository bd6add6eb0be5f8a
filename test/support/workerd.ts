import { Miniflare } from 'miniflare';
import type { Readable } from 'node:stream';
import { dirname, join } from 'node:path';

/**
 * A built Worker bundle (scripts/build.ts buildWorker) in miniflare's workerd, as Cloudflare runs it: an
 * R2 bucket bound as BUCKET (`r2`), the build's static assets served before the Worker runs (`assets`), and
 * the runtime's stdout and stderr handed to `output`.
 */
export function startWorkerd(
  script: string,
  bindings: Record<string, unknown>,
  options: { r2?: boolean; assets?: boolean; output?: (text: string) => void } = {},
): Miniflare {
  const { r2 = true, assets = true, output } = options;
  return new Miniflare({
    ...(output
      ? {
          handleRuntimeStdio(stdout: Readable, stderr: Readable) {
            stdout.on('data', (d: Buffer) => output(d.toString()));
            stderr.on('data', (d: Buffer) => output(d.toString()));
          },
        }
      : {}),
    scriptPath: script,
    modules: true,
    modulesRoot: dirname(script),
    compatibilityDate: '2026-04-01',
    ...(assets
      ? {
          assets: {
            directory: join(dirname(script), 'assets'),
            binding: 'ASSETS',
            routerConfig: { has_user_worker: true },
          },
        }
      : {}),
    ...(r2 ? { r2Buckets: ['BUCKET'] } : {}),
    bindings,
  });
}
