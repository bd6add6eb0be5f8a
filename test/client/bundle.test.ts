import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('client bundle', () => {
  it('builds for browsers and Workers: no Node built-ins, no server code, small', async () => {
    const out = await build({
      entryPoints: ['lib/client/index.ts'],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      minify: true,
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.filter((p) => p.startsWith('node:') || p.includes('node_modules'))).toEqual([]);
    // Only the client, the id format it shares with the server, and the helpers that needs.
    expect(inputs.sort()).toEqual([
      'lib/client/client.ts',
      'lib/client/errors.ts',
      'lib/client/index.ts',
      'lib/client/retry.ts',
      'lib/model/digest.ts',
      'lib/model/errors.ts',
      'lib/model/ids.ts',
    ]);
    // A tripwire well under the package's target (15 KiB gzip, `npm run bench:client`: about 4.6 KiB):
    // 12,000 B until 2026-12-06, when walking a wrapped fetch error's causes for a bad port took it past;
    // 12,500 B until 2026-12-07, when a call that got no answer came to name its attempts and whole wait.
    expect(out.outputFiles[0]!.contents.byteLength).toBeLessThan(12_800);
  });
});
