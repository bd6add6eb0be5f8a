import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

// A 400 quotes the request where it names a field: a key's path, zod's "Unrecognized key". A secret used
// as a key came back in clear (review), read where an answer is logged (a CI job's output, a proxy).
const GH = 'ghp_' + 'Zq8xW3vN5'.repeat(4).slice(0, 36);
const V = 'per-request-value-9f3k2j';

describe('problem details redact the secrets they quote', () => {
  it.each([
    ['a metadata key whose value is not a string', { task: 't', metadata: { [GH]: 5 } }],
    ['an unknown top-level key', { task: 't', [GH]: 1 }],
    [
      'a message field holding a lone surrogate',
      { task: 't', messages: [{ role: 'user', content: 'x', [GH]: '\ud800' }] },
    ],
  ])('a rule secret in %s', async (_, body) => {
    const app = await makeApp();
    const res = await app.call('POST', '/v1/sessions', { body });
    expect(res.status).toBe(400);
    expect(res.json.errors.length).toBeGreaterThan(0);
    expect(res.text).not.toContain(GH);
    expect(res.text).toContain('[REDACTED]');
    expect(JSON.stringify(app.logs.records)).not.toContain(GH);
  });

  it('a Satchel-Secrets value used as a key is redacted with it', async () => {
    const app = await makeApp();
    const secrets = Buffer.from(JSON.stringify([V])).toString('base64');
    const res = await app.call('POST', '/v1/sessions', {
      body: { task: 't', metadata: { [V]: 5 } },
      headers: { 'satchel-secrets': secrets },
    });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain(V);
    expect(res.json.errors[0].path).toBe('metadata.[REDACTED]');
    // Without the header the key is ordinary text, and named as it is.
    const plain = await app.call('POST', '/v1/sessions', {
      body: { task: 't', metadata: { [V]: 5 } },
    });
    expect(plain.json.errors[0].path).toBe(`metadata.${V}`);
  });
});
