import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { openTestS3 } from '../support/s3.js';
import { makeApp } from './helpers.js';

// Fake secrets in real formats, assembled at run time.
const rep = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
const SECRETS = {
  github: 'ghp_' + rep('Zq8xW3vN5', 36),
  aws: 'AKIA' + rep('QX7Z4K2M', 16),
  openai: 'sk-proj-' + rep('Ab3dE5gH7jK9mN', 64),
  anthropic: 'sk-ant-api03-' + rep('Qw9Er7Ty5Ui3Op1', 90),
  stripe: 'sk_live_' + rep('51HxYzAbCdEf', 40),
  slackHook: 'https://hooks.slack.com/services/T0000FAKE/B0000FAKE/' + rep('aBcDeFgH12', 24),
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlLXVzZXIiLCJuYW1lIjoiRmFrZSJ9.' + rep('sGn4tUr3x', 43),
  dbPassword: 'Tr0ub4dor-and-3',
  pem:
    '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA' +
    rep('fakeKeyMaterial0', 200) +
    '\n-----END RSA PRIVATE KEY-----',
  requestSecret: 'per-request-value-9f3k2j',
  configSecret: 'configured-value-7h2g5d',
};

function transcript() {
  return {
    task: `Rotate ${SECRETS.github} and fix CI`,
    messages: [
      { role: 'system', content: 'You are a careful engineer.' },
      {
        role: 'user',
        content: `my token is ${SECRETS.github}, aws ${SECRETS.aws}, openai ${SECRETS.openai}`,
      },
      {
        role: 'assistant',
        content: '',
        reasoning_content: `I will use ${SECRETS.anthropic}`,
        tool_calls: [
          {
            id: 'c1',
            type: 'function',
            function: {
              name: 'bash',
              arguments: JSON.stringify({
                command: `curl -H "Authorization: Bearer ${SECRETS.jwt}" ${SECRETS.slackHook}`,
              }),
            },
          },
          {
            id: 'c2',
            type: 'function',
            function: {
              name: 'write_env',
              arguments: `DB_PASSWORD=${SECRETS.dbPassword} STRIPE=${SECRETS.stripe}`,
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: `ok ${SECRETS.pem}` },
      {
        role: 'tool',
        tool_call_id: 'c2',
        content: `postgres://admin:${SECRETS.dbPassword}@db.internal:5432/app`,
      },
      {
        role: 'user',
        content: `also ${SECRETS.requestSecret} and ${Buffer.from(SECRETS.requestSecret).toString('base64')} and ${SECRETS.configSecret}`,
      },
    ],
    external_refs: [{ kind: 'ci', uri: `https://ci.example/run?access_token=${SECRETS.github}` }],
  };
}

async function exercise(app: Awaited<ReturnType<typeof makeApp>>) {
  const headers = {
    'satchel-secrets': Buffer.from(JSON.stringify([SECRETS.requestSecret])).toString('base64'),
  };
  const created = await app.call('POST', '/v1/sessions', { body: transcript(), headers });
  expect(created.status).toBe(201);
  // An imported id holding the request's own secret would become part of storage keys: refused.
  const named = await app.call('POST', '/v1/sessions', {
    body: { id: `imp-${SECRETS.requestSecret}`, task: 't' },
    headers,
  });
  expect(named.status).toBe(400);
  expect(named.json.errors).toContainEqual(expect.objectContaining({ path: 'id' }));
  const id = created.json.id;
  await app.call('POST', `/v1/sessions/${id}/messages`, {
    body: { messages: transcript().messages.slice(1), external_refs: transcript().external_refs },
    headers: { ...headers, 'idempotency-key': `retry-${SECRETS.github}`.slice(0, 200) },
  });
  await app.call('POST', `/v1/sessions/${id}/continue`, {
    body: { message: `continue with ${SECRETS.aws}` },
  });
  const got = await app.call('GET', `/v1/sessions/${id}`);
  await app.call('PUT', `/v1/sessions/${id}`, {
    body: {
      ...got.json,
      task: `replaced ${SECRETS.stripe}`,
      messages: [...got.json.messages, { role: 'user', content: SECRETS.openai }],
    },
    headers: { 'if-match': got.headers.get('etag')! },
  });
  await app.call('POST', `/v1/sessions/${id}/trim`, { body: { keep: 6 } });
  await app.call('POST', '/v1/sessions', {
    body: { task: 'second', messages: transcript().messages },
    headers,
  });
  await app.call('GET', '/v1/sessions');
  await app.sessions.manifest.compact('alice', true);
  const audit = await app.call('GET', `/v1/sessions/${id}/audit`);
  expect(audit.status).toBe(200);
  expect(audit.json.records.length).toBeGreaterThanOrEqual(4);
  expect(audit.json.records[0]).toMatchObject({ op: 'create', device: 'laptop' });
  expect(audit.json.records.some((r: { redactions: number }) => r.redactions > 0)).toBe(true);
  const stored = JSON.stringify(got.json);
  expect(stored).toContain('[REDACTED]');
  return stored;
}

function assertClean(dump: string, where: string) {
  for (const [name, secret] of Object.entries(SECRETS)) {
    const probe = name === 'pem' ? 'fakeKeyMaterial0' : secret;
    expect(dump.includes(probe), `${name} found in ${where}`).toBe(false);
  }
  expect(
    dump.includes(Buffer.from(SECRETS.requestSecret).toString('base64').slice(2, 18)),
    'base64 request secret',
  ).toBe(false);
}

describe('no secret from a request reaches any stored object', () => {
  it('local store: every file under the data folder is clean', async () => {
    const app = await makeApp({
      env: { SATCHEL_REDACT_VALUES: JSON.stringify([SECRETS.configSecret]) },
    });
    await exercise(app);
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const full = join(dir, name);
        if (statSync(full).isDirectory()) walk(full);
        else files.push(full);
      }
    };
    walk(app.dir);
    expect(files.some((f) => f.includes('/audit/'))).toBe(true);
    expect(files.some((f) => f.includes('/m/'))).toBe(true);
    assertClean(files.map((f) => f + '\n' + readFileSync(f, 'utf8')).join('\n'), 'the local store');
  });

  it('S3 (radosgw): every object in the bucket prefix is clean', async () => {
    const objects = openTestS3('secrets');
    const app = await makeApp({
      objects,
      env: { SATCHEL_REDACT_VALUES: JSON.stringify([SECRETS.configSecret]) },
    });
    await exercise(app);
    const all = await listAll(objects, '');
    expect(all.length).toBeGreaterThan(5);
    // A LIST is no snapshot: an index's garbage (an older root or segment) may go before its GET.
    const bodies = await Promise.all(
      all.map(async (k) => {
        const found = await objects.get(k);
        return found ? k + '\n' + text(found.body) : '';
      }),
    );
    assertClean(bodies.join('\n'), 'the bucket');
  });
});
