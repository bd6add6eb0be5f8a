import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../lib/server/config.js';

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
