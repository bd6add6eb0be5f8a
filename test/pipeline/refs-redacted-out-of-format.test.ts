// Review s52f (2026-12-06), fixed the same day; this test failed on the code before the fix.
// redactRefs (lib/pipeline/save.ts) redacts a ref's kind and uri but never checks the result against the
// stored format (docs/api.md "Stored format": kind 1-64 of [a-z0-9_-], uri 1-2048 bytes). A kind that
// holds a configured secret is stored as `[REDACTED]`, and a uri whose short secret becomes the longer
// placeholder is stored past 2048 bytes: the session's own GET can then not be PUT back (400), nor its refs
// appended again. Metadata has the rule for this exact case ("the limits hold for the metadata as stored, so
// that a GET of a session can always be PUT back": 400 on the create); refs have none.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

const KNOWN = 'configured-value-7h2g5d';

async function roundTrip(app: Awaited<ReturnType<typeof makeApp>>, id: string) {
  const got = await app.call('GET', `/v1/sessions/${id}`);
  return app.call('PUT', `/v1/sessions/${id}`, {
    body: got.json,
    headers: { 'if-match': got.headers.get('etag')! },
  });
}

it('a ref kind holding a known secret: what is stored can be PUT back', async () => {
  const app = await makeApp({ env: { SATCHEL_REDACT_VALUES: JSON.stringify([KNOWN]) } });
  const c = await app.call('POST', '/v1/sessions', {
    body: {
      id: 'r',
      task: 't',
      messages: [{ role: 'user', content: 'x' }],
      external_refs: [{ kind: KNOWN, uri: 'https://x.example/' }],
    },
  });
  // Either refused up front (400, nothing written) or stored in a form that stays valid.
  if (c.status === 201) {
    expect(c.json.external_refs[0].kind).toMatch(/^[a-z0-9_-]{1,64}$/);
    expect((await roundTrip(app, 'r')).status).toBe(200);
  } else expect(c.status).toBe(400);
});

it('a ref uri that redaction grows past 2048 bytes: what is stored can be PUT back', async () => {
  const app = await makeApp();
  const uri = 'https://x.example/?password=abcdef&' + 'q'.repeat(2011); // 2046 bytes as sent
  const c = await app.call('POST', '/v1/sessions', {
    body: {
      id: 'u',
      task: 't',
      messages: [{ role: 'user', content: 'x' }],
      external_refs: [{ kind: 'k', uri }],
    },
  });
  if (c.status === 201) {
    expect(Buffer.byteLength(c.json.external_refs[0].uri)).toBeLessThanOrEqual(2048);
    expect((await roundTrip(app, 'u')).status).toBe(200);
  } else expect(c.status).toBe(400);
});
