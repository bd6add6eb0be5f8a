import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The folders under lib/ are the layers (docs/design.md, "Layers"). Each may import only the layers
// listed for it; a lower layer importing a higher one fails here. `model` is the bottom; `http` the top.
const allowed: Record<string, string[]> = {
  model: [],
  storage: ['model'],
  pipeline: ['model'],
  sessions: ['model', 'storage', 'pipeline'],
  search: ['model', 'storage', 'pipeline', 'sessions'],
  continue: ['model', 'storage', 'pipeline', 'sessions', 'search'],
  hooks: ['model', 'storage', 'pipeline', 'sessions', 'search'],
  server: ['model', 'storage', 'pipeline', 'sessions', 'search', 'continue', 'hooks'],
  ui: ['model'],
  http: ['model', 'storage', 'pipeline', 'sessions', 'search', 'continue', 'hooks', 'server', 'ui'],
  // Outside the server: the client and what is built on it never import server code.
  client: ['model'],
  odek: ['model', 'client'],
  cli: ['model', 'client', 'odek'],
  // Drop-ins for agent frameworks, built on the client.
  adapters: ['model', 'client'],
};

const lib = resolve(__dirname, '..', 'lib');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.(ts|tsx)$/.test(e.name) ? [path] : [];
  });
}

/** The relative imports of a source file (static, dynamic and re-exports; type-only ones count too). */
export function importsOf(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;
  for (const m of source.matchAll(pattern)) found.push(m[1]!);
  return found;
}

function layerOf(file: string): string {
  return relative(lib, file).split('/')[0]!;
}

describe('layers', () => {
  const files = sources(lib);

  it('every file of lib/ sits in a known layer folder', () => {
    expect(files.map(layerOf).filter((layer) => !(layer in allowed))).toEqual([]);
  });

  it('no layer imports a layer above it', () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        const to = layerOf(resolve(dirname(file), spec));
        if (to !== from && !allowed[from]!.includes(to))
          violations.push(`${relative(lib, file)} imports ${spec} (${from} → ${to})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('the check sees imports of every form, so it can fail', () => {
    const source = [
      "import { a } from '../http/app.js';",
      "import type { B } from '../server/config.js';",
      "export { c } from './c.js';",
      "const d = await import('../sessions/store.js');",
    ].join('\n');
    expect(importsOf(source)).toEqual([
      '../http/app.js',
      '../server/config.js',
      './c.js',
      '../sessions/store.js',
    ]);
  });
});
