import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  createServerLogger,
  describeConfig,
  loadConfig,
  type Env,
} from '../../lib/server/config.js';
import type { LogRecord } from '../../lib/model/log.js';

const S3 = { SATCHEL_STORAGE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'http://127.0.0.1:9000' };
const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAEXAMPLEKEY', AWS_SECRET_ACCESS_KEY: 's3-secret-value-0123' };

async function refusal(env: Env): Promise<string> {
  const err = await loadConfig(env, 'local').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigError);
  return (err as Error).message;
}

describe('configuration errors name what is wrong', () => {
  it.each([
    [{ ...S3, S3_BUCKET: '' }, /S3_BUCKET/],
    [S3, /needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/],
    [{ ...S3, AWS_ACCESS_KEY_ID: 'AKIA' }, /AWS_SECRET_ACCESS_KEY is not/],
    [{ ...S3, AWS_SECRET_ACCESS_KEY: 'x' }, /AWS_ACCESS_KEY_ID is not/],
    [{ ...S3, ...KEYS, S3_ENDPOINT: 'minio:9000' }, /S3_ENDPOINT must be an http\(s\) URL/],
    [{ SATCHEL_MODEL_URL: 'http://127.0.0.1:8000/v1' }, /SATCHEL_MODEL is not/],
    [{ SATCHEL_MODEL: 'gpt-x' }, /SATCHEL_MODEL_URL is not/],
    [{ SATCHEL_LOG: 'verbose' }, /SATCHEL_LOG must be json, pretty or off/],
    [{ PORT: '80a' }, /PORT must be an integer/],
    // Decimal digits only: Number() took these as 80 and 1,000,000 until 2026-12-05 (review s51g).
    [{ PORT: '0x50' }, /PORT must be an integer/],
    [{ SATCHEL_MAX_BODY_BYTES: '1e6' }, /SATCHEL_MAX_BODY_BYTES must be an integer/],
    // A session's fields and a keyed write's records take about 1 KiB: under 4 KiB a webhook's message
    // could be refused after its 202 (review).
    [
      { SATCHEL_MAX_SESSION_BYTES: '2048' },
      /SATCHEL_MAX_SESSION_BYTES must be an integer from 4096/,
    ],
    // Also without a model or an embeddings service, where nothing reads them yet (first-hour review).
    [{ SATCHEL_MODEL_TIMEOUT_MS: 'abc' }, /SATCHEL_MODEL_TIMEOUT_MS must be an integer/],
    [{ SATCHEL_CONTINUE_WAIT_MS: '-1' }, /SATCHEL_CONTINUE_WAIT_MS/],
    [{ SATCHEL_EMBEDDINGS_DIMS: '0' }, /SATCHEL_EMBEDDINGS_DIMS/],
    [{ SATCHEL_STORAGE: 'disk' }, /SATCHEL_STORAGE must be local, s3 or r2/],
    // A device labels its writes (an external ref's created_by is 1-128 characters; review).
    [
      { SATCHEL_TOKENS: `alice/laptop=tok_a_0123456789,bob/${'d'.repeat(129)}=tok_b_0123456789` },
      /SATCHEL_TOKENS entry 2: the device label is over 128 characters/,
    ],
    // A token no client can send after `Bearer ` was accepted, then answered 401 forever (review).
    [
      { SATCHEL_TOKENS: 'alice=tok a 123456' },
      /SATCHEL_TOKENS entry 1: a token is 1 or more visible ASCII characters, no spaces/,
    ],
    [{ SATCHEL_TOKENS: 'alice=tok_b_\u00e9\u00e9_123456' }, /SATCHEL_TOKENS entry 1: a token is/],
    [{ SATCHEL_TOKENS: 'alice=' }, /SATCHEL_TOKENS entry 1: a token is/],
    // Set but listing no one: it was taken as zero tokens, and every caller got a 401 saying no
    // SATCHEL_TOKENS is configured (review s59b).
    [{ SATCHEL_TOKENS: ',' }, /SATCHEL_TOKENS holds no namespace\[\/device\]=token entry/],
    [{ SATCHEL_TOKENS: ' , ' }, /SATCHEL_TOKENS holds no namespace\[\/device\]=token entry/],
    // Auth takes the first entry that matches: bob's token would open alice's namespace (review).
    [
      { SATCHEL_TOKENS: 'alice/laptop=tok_shared_123,bob/ci=tok_shared_123' },
      /SATCHEL_TOKENS entries 1 and 2 have the same token/,
    ],
    [
      {
        // A read-only entry, and the same token's digest (sha256 of tok_shared_123) for another caller.
        SATCHEL_TOKENS:
          'a=tok_shared_123:ro,b=tok_other_456,' +
          'c=sha256:28a4562619c27aac83e2d5c5097fa66bfd5d2c63d517e9ba30a7407a127792ea',
      },
      /SATCHEL_TOKENS entries 1 and 3 have the same token/,
    ],
  ] as [Env, RegExp][])('%j', async (env, message) => {
    expect(await refusal(env)).toMatch(message);
  });

  it('SATCHEL_TOKENS: `:rw` is the default scope written out, not three characters of the token', async () => {
    const config = await loadConfig(
      { SATCHEL_TOKENS: 'alice=tok_alice_0123:rw,bob=tok_bob_4567:ro' },
      'local',
    );
    const digest = async (t: string) =>
      new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(t)));
    expect(config.tokens).toEqual([
      {
        namespace: 'alice',
        device: 'device-1',
        readOnly: false,
        digest: await digest('tok_alice_0123'),
      },
      {
        namespace: 'bob',
        device: 'device-2',
        readOnly: true,
        digest: await digest('tok_bob_4567'),
      },
    ]);
    // The same token with and without `:rw` is one token listed twice.
    expect(await refusal({ SATCHEL_TOKENS: 'a=tok_same_0123:rw,b=tok_same_0123' })).toMatch(
      /entries 1 and 2 have the same token/,
    );
    // And it is redacted as the token (review s50f: the secret was `<token>:rw`, found in no text, so a
    // `:rw` token was stored and logged in clear).
    expect(config.secrets).toEqual(expect.arrayContaining(['tok_alice_0123', 'tok_bob_4567']));
    expect(config.secrets?.some((v) => v.endsWith(':rw') || v.endsWith(':ro'))).toBe(false);
  });

  it('model and embeddings keys must be sendable in a header; the model timeout at most 300 s (review)', async () => {
    // A pasted curly dash or a line break: every call failed as "could not be reached", nothing said at start.
    const model = { SATCHEL_MODEL_URL: 'https://m.example', SATCHEL_MODEL: 'm' };
    for (const key of ['sk-abc\u2013def', 'sk-abc\ndef', 'sk abc'])
      expect(await refusal({ ...model, SATCHEL_MODEL_KEY: key })).toMatch(
        /SATCHEL_MODEL_KEY must be visible ASCII with no spaces/,
      );
    const embeddings = {
      SATCHEL_EMBEDDINGS_URL: 'https://e.example',
      SATCHEL_EMBEDDINGS_MODEL: 'e',
    };
    expect(await refusal({ ...embeddings, SATCHEL_EMBEDDINGS_KEY: 'k\u00e9y-0123' })).toMatch(
      /SATCHEL_EMBEDDINGS_KEY must be visible ASCII/,
    );
    expect(
      (await loadConfig({ ...model, SATCHEL_MODEL_KEY: 'sk-ok_0123' }, 'local')).model?.key,
    ).toBe('sk-ok_0123');
    // Node's fetch gives up on an answer after 300 s: a longer deadline could not be kept.
    expect(await refusal({ SATCHEL_MODEL_TIMEOUT_MS: '330000' })).toMatch(
      /SATCHEL_MODEL_TIMEOUT_MS/,
    );
    expect(
      (await loadConfig({ ...model, SATCHEL_MODEL_TIMEOUT_MS: '300000' }, 'local')).model
        ?.timeoutMs,
    ).toBe(300_000);
  });

  it('S3 with another credential source of the SDK (a profile) is accepted', async () => {
    const config = await loadConfig({ ...S3, AWS_PROFILE: 'work' }, 'local');
    expect(config.storage.kind).toBe('s3');
  });

  it('SATCHEL_LOG: the format, or absent for the runtime to decide', async () => {
    expect((await loadConfig({}, 'local')).log).toBeUndefined();
    expect((await loadConfig({ SATCHEL_LOG: 'OFF' }, 'local')).log).toBe('off');
    expect((await loadConfig({ SATCHEL_LOG: 'pretty' }, 'local')).log).toBe('pretty');
  });
});

describe('the start banner', () => {
  it('lists storage, auth, model, embeddings and hooks, never a secret', async () => {
    const config = await loadConfig(
      {
        ...S3,
        ...KEYS,
        S3_ENDPOINT: 'http://127.0.0.1:9000',
        S3_PREFIX: 'team',
        SATCHEL_TOKENS: 'alice/laptop=tok_banner_secret_0123,bob=tok_banner_bob_0123',
        SATCHEL_MODEL_URL: 'https://models.example/v1?key=q-secret',
        SATCHEL_MODEL: 'gpt-x',
        SATCHEL_MODEL_KEY: 'sk-banner-secret',
        SATCHEL_EMBEDDINGS_URL: 'https://embed.example/v1',
        SATCHEL_EMBEDDINGS_MODEL: 'e5',
        SATCHEL_EMBEDDINGS_KEY: 'ek-banner-secret',
        SATCHEL_HOOKS: JSON.stringify({
          ci: { secret: 'hook-banner-secret', namespace: 'alice', session: 'new' },
        }),
      },
      'local',
    );
    const banner = describeConfig(config);
    expect(banner).toEqual({
      storage: 's3 bucket b, prefix team, at http://127.0.0.1:9000',
      auth: '2 token(s) in 2 namespace(s)',
      model: 'gpt-x at https://models.example/v1',
      embeddings: 'e5 at https://embed.example/v1',
      hooks: 'ci',
    });
    expect(JSON.stringify(banner)).not.toMatch(/secret|pw@|AKIA/);
  });

  it('local storage names the folder; no model or embeddings say what happens instead', async () => {
    const banner = describeConfig(await loadConfig({ SATCHEL_DATA_DIR: 'data' }, 'local'));
    expect(banner).toMatchObject({
      storage: 'local folder data',
      auth: expect.stringContaining('SATCHEL_TOKENS is not set'),
      model: 'none (continue stores the message only)',
      embeddings: 'none (lexical search, local word vectors)',
      hooks: 'none',
    });
  });
});

describe('the server logger', () => {
  const collect = async (env: Env, isTTY = false) => {
    const lines: string[] = [];
    const records: LogRecord[] = [];
    const log = createServerLogger(await loadConfig(env, 'local'), {
      isTTY,
      write: (_level, line, record) => {
        lines.push(line);
        records.push(record);
      },
    });
    return { log, lines, records };
  };

  it('redacts every string of every line (message and fields) with the save pipeline and known values', async () => {
    const { log, lines } = await collect({ SATCHEL_REDACT_VALUES: '["corp-known-value-7781"]' });
    const token = 'ghp_' + 'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2';
    log.error(`failed for ${token}`, { error: `Error: key corp-known-value-7781 refused` });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(token);
    expect(lines[0]).not.toContain('corp-known-value-7781');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'failed for [REDACTED]' });
  });

  it('json off a terminal, pretty on one, SATCHEL_LOG wins, off writes nothing', async () => {
    const json = await collect({});
    json.log.info('request', { method: 'GET', status: 200 });
    expect(JSON.parse(json.lines[0]!)).toMatchObject({
      msg: 'request',
      method: 'GET',
      status: 200,
    });
    const tty = await collect({}, true);
    tty.log.info('request', { method: 'GET', route: '/v1/sessions', status: 200, note: 'a b' });
    expect(tty.lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO  request method=GET route=\/v1\/sessions status=200 note="a b"$/,
    );
    const forced = await collect({ SATCHEL_LOG: 'json' }, true);
    forced.log.warn('x');
    expect(JSON.parse(forced.lines[0]!)).toMatchObject({ level: 'warn', msg: 'x' });
    const off = await collect({ SATCHEL_LOG: 'off' });
    off.log.error('nothing');
    expect(off.lines).toEqual([]);
  });
});
