import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServerLogger, loadConfig, type Env } from '../../lib/server/config.js';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp, TOKENS } from '../http/helpers.js';

// The configuration's own secrets (model and embeddings keys, hook secrets, plain tokens, the AWS secret
// key) were not known values of the save pipeline: a reply or a message holding one was stored as is
// (found by review). They are redacted like SATCHEL_REDACT_VALUES, without changing the rules' fingerprint.

const MODEL_KEY = 'team-gateway-key-4815162342';
const EMBED_KEY = 'embed-gateway-key-2342';
const HOOK_SECRET = 'hook-secret-value-1623';
const AWS_SECRET = 'aws-secret-value-9f8e7d';
const SECRETS: Env = {
  SATCHEL_MODEL_URL: 'http://127.0.0.1:9/v1',
  SATCHEL_MODEL: 'm',
  SATCHEL_MODEL_KEY: MODEL_KEY,
  SATCHEL_EMBEDDINGS_KEY: EMBED_KEY,
  SATCHEL_HOOKS: JSON.stringify({
    ci: { secret: HOOK_SECRET, namespace: 'alice', session: 'new' },
  }),
  AWS_SECRET_ACCESS_KEY: AWS_SECRET,
};

/** A token (its digest: no secret) that opens `alice`, the hook's namespace (review s62g: required). */
const ALICE: Env = { SATCHEL_TOKENS: `alice=sha256:${'cd'.repeat(32)}` };

/** The stored object of a session, as the bucket holds it. */
const storedObject = (dir: string, id: string) =>
  JSON.parse(readFileSync(join(dir, 'ns', 'alice', 'sessions', `${id}.json`), 'utf8'));

describe('configured secrets', () => {
  it('are the keys, hook secrets, plain tokens and AWS secrets that look like keys (12+, a letter, a digit)', async () => {
    const config = await loadConfig(
      {
        ...SECRETS,
        // `alice`: the hook's namespace must be one a token opens (review s62g); a digest, not a secret.
        SATCHEL_TOKENS: `a/x=tok_plain_0123:ro,b=short7,c=sha256:${'ab'.repeat(32)},alice=sha256:${'cd'.repeat(32)}`,
        AWS_SESSION_TOKEN: 'aws-session-token-7781',
      },
      'local',
    );
    expect(new Set(config.secrets)).toEqual(
      new Set([
        MODEL_KEY,
        EMBED_KEY,
        HOOK_SECRET,
        AWS_SECRET,
        'aws-session-token-7781',
        'tok_plain_0123',
      ]),
    );
    // Local servers' documented any-value keys are words: redacting them would destroy ordinary text.
    for (const key of ['lm-studio', 'sk-no-key-required', 'not-needed'])
      expect(
        (await loadConfig({ ...SECRETS, ...ALICE, SATCHEL_MODEL_KEY: key }, 'local')).secrets,
      ).not.toContain(key);
  });

  it('are redacted from what a write stores and answers; the rules fingerprint is that of the rules', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'satchel-secrets-'));
    const app = await makeApp({ env: SECRETS, objects: new LocalStore(dir) });
    const plain = await makeApp({ objects: new LocalStore(dir) });
    const said = `model ${MODEL_KEY}, embed ${EMBED_KEY}, hook ${HOOK_SECRET}, aws ${AWS_SECRET}`;
    const created = await app.call('POST', '/v1/sessions', {
      body: { task: `token ${TOKENS.laptop}`, messages: [{ role: 'user', content: said }] },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    // Hex and base64 forms too, as for SATCHEL_REDACT_VALUES.
    const hex = Buffer.from(MODEL_KEY).toString('hex');
    const appended = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'assistant', content: `hex ${hex} b64 ${btoa(MODEL_KEY)}` }] },
    });
    expect(appended.json.redactions).toBe(2);
    const text = readFileSync(join(dir, 'ns', 'alice', 'sessions', `${id}.json`), 'utf8');
    for (const secret of [MODEL_KEY, EMBED_KEY, HOOK_SECRET, AWS_SECRET, TOKENS.laptop, hex])
      expect(text).not.toContain(secret);
    // A configured value under 12 characters is not one: it could be a word of any text.
    const short = await makeApp({
      env: { ...SECRETS, SATCHEL_MODEL_KEY: 'abc1234' },
      objects: new LocalStore(dir),
    });
    const content = 'the code abc1234 stays';
    const kept = await short.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'user', content }] },
    });
    expect(kept.json.redactions).toBe(0);
    expect((await short.call('GET', `/v1/sessions/${id}`)).json.messages.at(-1).content).toBe(
      content,
    );
    // A session saved by a process without those secrets is proven by the same scan record: sharing a
    // bucket with it (or rotating a key) does not rescan every session.
    const other = await plain.call('POST', '/v1/sessions', {
      body: { task: 't', messages: [{ role: 'user', content: 'hello' }] },
    });
    expect(storedObject(dir, id).satchel.scan.v).toBe(
      storedObject(dir, other.json.id).satchel.scan.v,
    );
  });

  it('never reach a log line', async () => {
    const lines: string[] = [];
    const log = createServerLogger(await loadConfig({ ...SECRETS, ...ALICE }, 'local'), {
      write: (_level, line) => void lines.push(line),
    });
    log.warn(`model said ${MODEL_KEY}`, { error: `hook ${HOOK_SECRET} refused` });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(MODEL_KEY);
    expect(lines[0]).not.toContain(HOOK_SECRET);
  });
});
