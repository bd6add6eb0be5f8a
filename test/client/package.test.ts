import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientBundleSize } from '../../scripts/build.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { installClientPackage, type InstalledPackage } from './install-package.js';

const root = resolve(__dirname, '..', '..');
// Not execFileSync where the program talks to the server: the server runs in this process.
const run = promisify(execFile);

describe('client package (npm pack, installed into a fresh project)', () => {
  let pkg: InstalledPackage;
  let server: RunningServer;

  beforeAll(async () => {
    pkg = await installClientPackage();
    server = await startSatchelServer();
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    pkg?.remove();
  });

  const installed = () => join(pkg.dir, 'node_modules', 'satchel');

  it('holds the built client, adapters, CLI, declarations and LICENSE, and nothing of the server', () => {
    const files = listFiles(installed()).sort();
    expect(files).toContain('LICENSE');
    expect(files).toContain('README.md');
    expect(files).toContain('bin/satchel.js');
    for (const entry of ['client/index', 'adapters/openai-agents', 'adapters/ai-sdk']) {
      expect(files).toContain(`dist/${entry}.js`);
      expect(files).toContain(`dist/${entry}.d.ts`);
    }
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => /model\/|server|http|storage|sessions/.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(installed(), 'package.json'), 'utf8'));
    expect(manifest.license).toBe('MIT');
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(Object.keys(manifest.exports)).toEqual([
      '.',
      './openai-agents',
      './ai-sdk',
      './package.json',
    ]);
    expect(readFileSync(join(installed(), 'LICENSE'), 'utf8')).toBe(
      readFileSync(join(root, 'LICENSE'), 'utf8'),
    );
    // Declarations name neither zod nor the server's model: the package installs with no dependencies.
    for (const f of files.filter((f) => f.endsWith('.d.ts'))) {
      expect(readFileSync(join(installed(), f), 'utf8'), f).not.toMatch(/\bzod\b|\/model\//);
    }
  });

  it('is used by a plain ES module against a real server (create, append parts, list by metadata)', async () => {
    writeFileSync(
      join(pkg.dir, 'use.mjs'),
      `import { SatchelClient, SatchelApiError } from 'satchel';
const client = new SatchelClient({ url: process.env.SATCHEL_URL });
const { session } = await client.create({ task: 'from the package', metadata: { user: 'u1' } });
await client.append(session.id, { messages: [{ role: 'user', content: [
  { type: 'text', text: 'look at this' },
  { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
] }] });
const read = (await client.get(session.id)).session;
const page = await client.list({ metadata: { user: 'u1' } });
let missing;
try { await client.get('no-such-session'); } catch (err) { missing = SatchelApiError.is(err) && err.status; }
console.log(JSON.stringify({ content: read.messages[0].content, listed: page.sessions.map((s) => s.id), id: session.id, missing }));
`,
    );
    const { stdout } = await run(process.execPath, ['use.mjs'], {
      cwd: pkg.dir,
      env: { ...process.env, SATCHEL_URL: server.url },
    });
    const out = JSON.parse(stdout);
    expect(out.content).toEqual([
      { type: 'text', text: 'look at this' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
    ]);
    expect(out.listed).toEqual([out.id]);
    expect(out.missing).toBe(404);
  });

  it('type-checks a TypeScript user of the package with its own declarations (no skipLibCheck)', () => {
    writeFileSync(
      join(pkg.dir, 'use.ts'),
      `import { SatchelClient, type Session, type MessageInput, type PopResult } from 'satchel';
const client = new SatchelClient({ url: 'http://127.0.0.1:8787' });
const message: MessageInput = { role: 'user', content: [{ type: 'text', text: 'hi' }] };
export async function demo(): Promise<number> {
  const { session }: { session: Session } = await client.create({ task: 't', messages: [message] });
  const popped: PopResult = await client.pop(session.id);
  return popped.popped.length + session.turns;
}
`,
    );
    writeFileSync(
      join(pkg.dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
          skipLibCheck: false,
        },
        files: ['use.ts'],
      }),
    );
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc')], {
      cwd: pkg.dir,
      stdio: 'pipe',
    });
  });

  it('installs the satchel command (bin), which talks to the server', async () => {
    const bin = join(pkg.dir, 'node_modules', '.bin', 'satchel');
    expect(existsSync(bin)).toBe(true);
    const { stdout } = await run(bin, ['session', 'list', '--json'], {
      cwd: pkg.dir,
      env: { ...process.env, SATCHEL_URL: server.url },
    });
    expect(stdout).toContain('from the package');
  });

  it('bundles for browsers and Workers under 15 KB gzip, with no Node built-ins', async () => {
    const size = await clientBundleSize(join(installed(), 'dist'));
    // Only the package's own files: no Node built-ins, no other package.
    expect(size.inputs.filter((p) => !p.includes('node_modules/satchel/dist/'))).toEqual([]);
    expect(size.gzip).toBeLessThan(15 * 1024);
  });
});

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(dir, join(prefix, e.name)) : [join(prefix, e.name)],
  );
}
