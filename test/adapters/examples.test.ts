import { execFile } from 'node:child_process';
import { copyFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { openTestS3 } from '../support/s3.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { installClientPackage, type InstalledPackage } from '../client/install-package.js';
import { startStreamProxy } from './stream-proxy.js';

const examples = resolve(__dirname, '..', '..', 'examples');
const run = promisify(execFile);
const HOOK_SECRET = 'hook-secret-for-the-example-3f9c1a';

/**
 * Each program of examples/ runs as a user would run it: in a fresh project with the packed client
 * package installed (and the frameworks it uses), against a Satchel server on radosgw and the scripted
 * chat model.
 */
describe('examples/ (run from an installed package)', () => {
  let pkg: InstalledPackage;
  let server: RunningServer;
  let chat: ChatServer;
  let proxy: Awaited<ReturnType<typeof startStreamProxy>>;
  let client: SatchelClient;

  beforeAll(async () => {
    pkg = await installClientPackage([
      '@openai/agents',
      'openai',
      'zod',
      'ai',
      '@ai-sdk/openai-compatible',
      'tsx',
    ]);
    for (const f of readdirSync(examples).filter((f) => f.endsWith('.ts')))
      copyFileSync(join(examples, f), join(pkg.dir, f));
    server = await startSatchelServer({
      objects: openTestS3('examples'),
      env: {
        SATCHEL_HOOKS: JSON.stringify({
          github: { secret: HOOK_SECRET, namespace: 'default', session: 'new' },
        }),
      },
    });
    chat = await startChatServer();
    proxy = await startStreamProxy(chat.url);
    client = new SatchelClient({ url: server.url });
  }, 300_000);
  afterAll(async () => {
    await proxy?.close();
    await chat?.close();
    await server?.close();
    pkg?.remove();
  });

  const example = async <T>(file: string, args: string[], env: Record<string, string> = {}) => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', file, ...args], {
      cwd: pkg.dir,
      env: { ...process.env, SATCHEL_URL: server.url, ...env },
    });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
  };

  it('type-check against the sources (examples/tsconfig.json maps the package names to lib/)', async () => {
    const tsc = resolve(examples, '..', 'node_modules', 'typescript', 'bin', 'tsc');
    await run(process.execPath, [tsc, '-p', examples]);
  });

  it('openai-agents.ts: two runs in two processes share one session', async () => {
    chat.script(
      { toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] },
      { reply: 'Sunny in Oslo.' },
      { reply: 'You asked about Oslo.' },
    );
    const env = { MODEL_URL: chat.url, MODEL: 'test-model' };
    const first = await example<{ answer: string; items: number }>(
      'openai-agents.ts',
      ['ex-agents', 'Weather in Oslo?'],
      env,
    );
    expect(first).toEqual({ answer: 'Sunny in Oslo.', items: 4 });
    const second = await example('openai-agents.ts', ['ex-agents', 'What did I ask?'], env);
    expect(second).toEqual({ answer: 'You asked about Oslo.', items: 6 });
    expect(chat.requests.at(-1)!.body.messages.filter((m) => m.role === 'user')).toHaveLength(2);
    const { session } = await client.get('ex-agents');
    expect(session.metadata).toMatchObject({ app: 'examples', framework: 'openai-agents' });
  });

  it('ai-sdk-route.ts: the route handler streams two turns and the chat is saved', async () => {
    chat.script({ reply: 'I am a test model.' }, { reply: 'I can answer tests.' });
    const out = await example<{ messages: { role: string; parts: { text?: string }[] }[] }>(
      'ai-sdk-route.ts',
      ['ex-chat'],
      { MODEL_URL: proxy.url, MODEL: 'test-model', MODEL_KEY: 'k' },
    );
    expect(out.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(out.messages[3]!.parts.map((p) => p.text).join('')).toContain('I can answer tests.');
  });

  it('worker.ts: a Worker (workerd) appends and reads notes through the client', async () => {
    const bundled = await build({
      entryPoints: [join(pkg.dir, 'worker.ts')],
      absWorkingDir: pkg.dir,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    const mf = new Miniflare({
      modules: true,
      script: bundled.outputFiles[0]!.text,
      compatibilityDate: '2026-04-01',
      bindings: { SATCHEL_URL: server.url },
    });
    try {
      const first = await mf.dispatchFetch('http://worker/notes/ex-worker', {
        method: 'POST',
        body: 'buy milk',
      });
      expect(first.status).toBe(201);
      await first.text();
      const second = await mf.dispatchFetch('http://worker/notes/ex-worker', {
        method: 'POST',
        body: 'call Ana',
      });
      expect(second.status).toBe(200);
      await second.text();
      const notes = await mf.dispatchFetch('http://worker/notes/ex-worker');
      expect(await notes.json()).toEqual(['buy milk', 'call Ana']);
    } finally {
      await mf.dispose();
    }
  });

  it('github-webhook.ts: a signed delivery becomes a session, read back with the client', async () => {
    const out = await example<{
      status: number;
      task: string;
      untrusted: boolean;
      message: string;
    }>('github-webhook.ts', ['delivery-1347'], { HOOK_SECRET });
    expect(out).toMatchObject({ status: 202, untrusted: true });
    expect(out.message).toContain('Flaky test in CI');
    expect(out.message).toContain('untrusted_content_');
  });
});
