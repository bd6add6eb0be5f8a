import { afterAll, describe, expect, inject, it } from 'vitest';
import { configFrom, loadConfig, type Env } from '../../lib/server/config.js';
import { runEntry } from '../support/node-entry.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { makeApp } from '../http/helpers.js';

// Review s62g (a new user's first hour): settings that were taken at start and then failed every request,
// or did something else than they said, are refused at start with one line naming the variable.

const s3Env = (extra: Env): Env => ({
  SATCHEL_STORAGE: 's3',
  S3_BUCKET: 'b',
  AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'secret',
  ...extra,
});

/** The message loadConfig refuses `env` with (on Node's default storage). */
const refusal = (env: Env) =>
  loadConfig(env, 'local').then(
    () => 'accepted',
    (err: Error) => `${err.name}: ${err.message}`,
  );

describe('S3_REGION / AWS_REGION that is no region name (finding 1)', () => {
  it('is refused at start, naming the variable set', async () => {
    for (const region of ['us-east-1 ', 'eu_west', ' eu-west-1', 'eu-west-1\n', '-eu'])
      expect(await refusal(s3Env({ S3_REGION: region }))).toBe(
        'ConfigError: S3_REGION must be a region name such as eu-west-1',
      );
    expect(await refusal(s3Env({ AWS_REGION: 'eu_west' }))).toBe(
      'ConfigError: AWS_REGION must be a region name such as eu-west-1',
    );
    for (const region of ['eu-west-1', 'auto', 'us-gov-west-1', 'US-EAST-1'])
      expect(await refusal(s3Env({ S3_REGION: region }))).toBe('accepted');
  });

  it('the Node entry stops with that one line', async () => {
    const run = await runEntry(s3Env({ S3_REGION: 'eu_west' }) as Record<string, string>);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('satchel: S3_REGION must be a region name such as eu-west-1\n');
  });

  it('a wrong secret: the banner says storage refuses the credentials, requests answer 503 naming it', async () => {
    const s3 = inject('s3');
    let answer: { status: number; detail: string } | undefined;
    const run = await runEntry(
      {
        SATCHEL_STORAGE: 's3',
        S3_ENDPOINT: s3.endpoint,
        S3_REGION: s3.region,
        S3_BUCKET: s3.bucket,
        S3_PREFIX: `s62g-banner-${Date.now()}`,
        AWS_ACCESS_KEY_ID: s3.accessKeyId,
        AWS_SECRET_ACCESS_KEY: 'not-the-secret-0123',
      },
      async (url) => {
        const res = await fetch(`${url}/v1/sessions`);
        answer = { status: res.status, detail: ((await res.json()) as { detail: string }).detail };
      },
    );
    expect(answer).toEqual({
      status: 503,
      detail:
        "storage refused Satchel's credentials (HTTP 403 SignatureDoesNotMatch); check " +
        'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    });
    const banner = JSON.parse(run.stdout.split('\n')[0]!);
    expect(banner.storage_state).toBe(
      'refusing access (HTTP 403 SignatureDoesNotMatch): requests answer 503 until the credentials ' +
        'are fixed (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)',
    );
    expect(run.stdout + run.stderr).not.toContain('not-the-secret-0123');
  });
});

describe('a hook whose namespace no token opens (finding 2)', () => {
  const hook = (namespace: string) =>
    JSON.stringify({ ci: { secret: 'hook-secret-0123456789', namespace, session: 'latest' } });

  it('is refused at start, naming the hook and the namespaces the tokens open', async () => {
    expect(
      await refusal({
        SATCHEL_TOKENS: 'alice/laptop=tok_alice_1,bob=tok_bob_1,alice/phone=tok_alice_2',
        SATCHEL_HOOKS: hook('alcie'),
      }),
    ).toBe(
      'ConfigError: SATCHEL_HOOKS "ci": no SATCHEL_TOKENS entry opens namespace "alcie" ' +
        '(open: alice, bob)',
    );
    expect(await refusal({ SATCHEL_TOKENS: 'alice=tok_a', SATCHEL_HOOKS: hook('alice') })).toBe(
      'accepted',
    );
  });

  it('in open mode, any namespace but default is refused', async () => {
    expect(await refusal({ SATCHEL_HOOKS: hook('team') })).toBe(
      'ConfigError: SATCHEL_HOOKS "ci": no SATCHEL_TOKENS entry opens namespace "team" ' +
        '(open: default)',
    );
    expect(await refusal({ SATCHEL_HOOKS: hook('default') })).toBe('accepted');
  });

  it('a write-only hook namespace stays possible with a read-only token for it', async () => {
    expect(
      await refusal({
        SATCHEL_TOKENS: 'alice=tok_a,inbox/reader=tok_inbox_reader:ro',
        SATCHEL_HOOKS: hook('inbox'),
      }),
    ).toBe('accepted');
  });

  it('the R2-only config (Workers) refuses it the same way', async () => {
    const err = await configFrom({ SATCHEL_TOKENS: 'alice=tok_a', SATCHEL_HOOKS: hook('x') }, 'r2')
      .then(() => null)
      .catch((e: Error) => e.message);
    expect(err).toBe(
      'SATCHEL_HOOKS "ci": no SATCHEL_TOKENS entry opens namespace "x" (open: alice)',
    );
  });

  it('the Node entry stops with that one line', async () => {
    const run = await runEntry({ SATCHEL_TOKENS: 'alice=tok_a', SATCHEL_HOOKS: hook('alcie') });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'satchel: SATCHEL_HOOKS "ci": no SATCHEL_TOKENS entry opens namespace "alcie" (open: alice)\n',
    );
  });
});

describe('a model or embeddings URL given as the full endpoint (finding 3)', () => {
  it('SATCHEL_MODEL_URL ending in /chat/completions is refused: drop it', async () => {
    for (const url of [
      'https://api.openai.com/v1/chat/completions',
      'https://api.openai.com/v1/chat/completions/',
      'https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-06-01',
    ])
      expect(await refusal({ SATCHEL_MODEL_URL: url, SATCHEL_MODEL: 'm' })).toBe(
        'ConfigError: SATCHEL_MODEL_URL must not end in /chat/completions (Satchel adds it)',
      );
    expect(
      await refusal({ SATCHEL_MODEL_URL: 'https://api.openai.com/v1', SATCHEL_MODEL: 'm' }),
    ).toBe('accepted');
  });

  it('SATCHEL_EMBEDDINGS_URL ending in /embeddings is refused: drop it', async () => {
    expect(
      await refusal({
        SATCHEL_EMBEDDINGS_URL: 'https://api.openai.com/v1/embeddings',
        SATCHEL_EMBEDDINGS_MODEL: 'e',
      }),
    ).toBe('ConfigError: SATCHEL_EMBEDDINGS_URL must not end in /embeddings (Satchel adds it)');
    expect(
      await refusal({
        SATCHEL_EMBEDDINGS_URL: 'https://api.openai.com/v1',
        SATCHEL_EMBEDDINGS_MODEL: 'e',
      }),
    ).toBe('accepted');
  });

  const servers: ChatServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it("a model's 404 names the path it posted to and SATCHEL_MODEL_URL, not waiting for the model", async () => {
    const chat = await startChatServer(); // answers 404 to any path but /chat/completions
    servers.push(chat);
    const app = await makeApp({
      env: { SATCHEL_MODEL_URL: `${chat.url}/v2?k=secret-query`, SATCHEL_MODEL: 'm' },
    });
    await app.call('POST', '/v1/sessions', { body: { id: 'm', task: 't' } });
    const res = await app.call('POST', '/v1/sessions/m/continue', { body: { message: 'hi' } });
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(
      /^the model endpoint answered HTTP 404 for POST \/v2\/chat\/completions: check SATCHEL_MODEL_URL; your message was stored/,
    );
    expect(res.text).not.toContain('secret-query');
    expect(res.text).not.toContain('127.0.0.1');
  });
});

describe('a token suffix not in lower case (finding 4)', () => {
  it(':RO, :Ro, :RW and :rW are refused: write :ro or :rw', async () => {
    for (const suffix of ['RO', 'Ro', 'rO', 'RW', 'Rw', 'rW'])
      expect(await refusal({ SATCHEL_TOKENS: `alice=tok_a,alice/ci=tok_ci:${suffix}` })).toBe(
        'ConfigError: SATCHEL_TOKENS entry 2: write the suffix as :ro or :rw',
      );
    const config = await loadConfig(
      { SATCHEL_TOKENS: 'alice=tok_a:rw,alice/ci=tok_ci:ro,alice/x=tok:r' },
      'local',
    );
    expect(config.tokens!.map((t) => t.readOnly)).toEqual([false, true, false]);
  });
});
