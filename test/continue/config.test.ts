import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../lib/server/config.js';
import { makeApp } from '../http/helpers.js';

const load = (env: Record<string, string>) => loadConfig(env, 'local');

describe('config: the continue model', () => {
  it('is configured only when both SATCHEL_MODEL_URL and SATCHEL_MODEL are set; one alone is refused', async () => {
    expect((await load({})).model).toBeUndefined();
    await expect(load({ SATCHEL_MODEL_URL: 'https://api.example.com/v1' })).rejects.toThrow(
      /SATCHEL_MODEL_URL is set but SATCHEL_MODEL is not/,
    );
    await expect(load({ SATCHEL_MODEL: 'm' })).rejects.toThrow(
      /SATCHEL_MODEL is set but SATCHEL_MODEL_URL is not/,
    );
    expect(
      (await load({ SATCHEL_MODEL_URL: 'https://api.example.com/v1', SATCHEL_MODEL: 'm' })).model,
    ).toEqual({
      url: 'https://api.example.com/v1',
      model: 'm',
      provider: 'api.example.com',
      timeoutMs: 120_000,
      contextBytes: 256 * 1024,
      waitMs: 5000,
    });
  });

  it('takes the key, a provider label, the knobs, and drops trailing slashes', async () => {
    const { model } = await load({
      SATCHEL_MODEL_URL: 'http://127.0.0.1:8000/v1//',
      SATCHEL_MODEL: 'llama',
      SATCHEL_MODEL_KEY: 'sk-x',
      SATCHEL_MODEL_PROVIDER: 'vllm',
      SATCHEL_MODEL_TIMEOUT_MS: '30000',
      SATCHEL_MODEL_CONTEXT_BYTES: '100000',
      SATCHEL_CONTINUE_WAIT_MS: '0',
    });
    expect(model).toEqual({
      url: 'http://127.0.0.1:8000/v1',
      model: 'llama',
      key: 'sk-x',
      provider: 'vllm',
      timeoutMs: 30_000,
      contextBytes: 100_000,
      waitMs: 0,
    });
  });

  for (const [name, env, message] of [
    ['a URL that is not one', { SATCHEL_MODEL_URL: 'not a url' }, /SATCHEL_MODEL_URL/],
    ['a URL that is not http(s)', { SATCHEL_MODEL_URL: 'file:///etc/passwd' }, /SATCHEL_MODEL_URL/],
    [
      'a timeout that is not a number',
      { SATCHEL_MODEL_TIMEOUT_MS: 'soon' },
      /SATCHEL_MODEL_TIMEOUT_MS/,
    ],
    [
      'a context budget too small',
      { SATCHEL_MODEL_CONTEXT_BYTES: '10' },
      /SATCHEL_MODEL_CONTEXT_BYTES/,
    ],
    ['a negative wait', { SATCHEL_CONTINUE_WAIT_MS: '-1' }, /SATCHEL_CONTINUE_WAIT_MS/],
  ] as [string, Record<string, string>, RegExp][]) {
    it(`${name} fails at start, naming the variable, never the key`, async () => {
      const err = await load({
        SATCHEL_MODEL_URL: 'https://x.example',
        SATCHEL_MODEL: 'm',
        SATCHEL_MODEL_KEY: 'sk-secret-key',
        ...env,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain('sk-secret-key');
    });
  }
});

describe('config: the model URL (review)', () => {
  // fetch refuses a URL with credentials: every continue was a 502.
  for (const [name, url, message] of [
    [
      'credentials',
      'https://user:sk-secret-key@x.example/v1',
      /SATCHEL_MODEL_URL must be an http\(s\) URL without user:password@ \(the key goes in SATCHEL_MODEL_KEY\)/,
    ],
    ['a user name', 'https://sk-secret-key@x.example/v1', /without user:password@/],
    ['a fragment', 'https://x.example/v1#sk-secret-key', /SATCHEL_MODEL_URL must be .*#fragment$/],
  ] as const) {
    it(`with ${name} is refused at start, naming the variable, never the key`, async () => {
      const err = await load({ SATCHEL_MODEL_URL: url, SATCHEL_MODEL: 'm' }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain('sk-secret-key');
    });
  }
});

describe('config: the embeddings URL (review)', () => {
  const embeddings = (url: string) =>
    load({
      SATCHEL_EMBEDDINGS_URL: url,
      SATCHEL_EMBEDDINGS_MODEL: 'e5',
      SATCHEL_EMBEDDINGS_KEY: 'ek-1',
    });

  it('is refused at start with credentials, a fragment or a query (the client adds its path after it)', async () => {
    const refused = new RegExp(
      String.raw`^SATCHEL_EMBEDDINGS_URL must be an http\(s\) URL without user:password@ ` +
        String.raw`\(the key goes in SATCHEL_EMBEDDINGS_KEY\), #fragment or \?query$`,
    );
    for (const url of [
      'https://u:ek-secret@e.example/v1',
      'https://e.example/v1#x',
      'https://e.example/v1?api-version=1',
      'ftp://e.example/v1',
    ]) {
      const err = await embeddings(url).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(refused);
      expect((err as Error).message).not.toContain('ek-secret');
    }
    expect((await embeddings('https://e.example/v1/')).embeddings?.url).toBe(
      'https://e.example/v1',
    );
  });
});

describe('the model URL with a query (Azure OpenAI api-version, review)', () => {
  it('is kept, after the path: the turn posts to {path}/chat/completions?{query}', async () => {
    const targets: string[] = [];
    const server = createServer((req, res) => {
      targets.push(req.url ?? '');
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const message = { role: 'assistant', content: 'ok' };
        res.end(JSON.stringify({ choices: [{ index: 0, message }] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const url = `${base}/openai/deployments/d1/?api-version=2024-06-01`;
      const app = await makeApp({ env: { SATCHEL_MODEL_URL: url, SATCHEL_MODEL: 'm' } });
      expect(app.config.model?.url).toBe(`${base}/openai/deployments/d1?api-version=2024-06-01`);
      const created = await app.call('POST', '/v1/sessions', { body: { task: 't' } });
      const res = await app.call('POST', `/v1/sessions/${created.json.id}/continue`, {
        body: { message: 'hi' },
      });
      expect(res.status).toBe(200);
      expect(res.json.reply).toBe('ok');
      expect(targets).toEqual(['/openai/deployments/d1/chat/completions?api-version=2024-06-01']);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
