// Review s52h (2026-12-06), fixed the same day; these tests failed on the code before the fix.
// Review s52h. redactRefs (lib/pipeline/save.ts, 0173741) checks the stored format only for refs that are
// new (`!kept.has(JSON.stringify(ref))`); a stored ref the write leaves as it was is redacted again (with
// this request's Satchel-Secrets, or new rules) and stored out of format without a check. A PUT's refs
// are then held to externalRefInputSchema (kind 1-64 of [a-z0-9_-]), so the session's own GET can no longer
// be PUT back: 400. docs/api.md: "so what GET answers can always be PUT back"; metadata has the matching
// rule ("a PUT that sends back the stored metadata (what GET answered) is taken").
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';

const KIND = 'deploy-7h2g5d';
const secrets = (v: string[]) => ({ 'satchel-secrets': btoa(JSON.stringify(v)) });

it('a stored ref redacted by a later write: its GET can still be PUT back', async () => {
  const app = await makeApp();
  const c = await app.call('POST', '/v1/sessions', {
    body: {
      id: 'r',
      task: 't',
      messages: [{ role: 'user', content: 'x' }],
      external_refs: [{ kind: KIND, uri: 'https://x.example/' }],
    },
  });
  expect(c.status).toBe(201);
  // A later append that names the value as a secret (nothing new in the refs).
  const a = await app.call('POST', '/v1/sessions/r/messages', {
    body: { messages: [{ role: 'assistant', content: 'ok' }] },
    headers: secrets([KIND]),
  });
  expect(a.status).toBe(200);
  const got = await app.call('GET', '/v1/sessions/r');
  const put = await app.call('PUT', '/v1/sessions/r', {
    body: got.json,
    headers: { 'if-match': got.headers.get('etag')! },
  });
  // Either the append is refused up front (as a new ref would be) or what GET answers is PUT back.
  expect(put.status, JSON.stringify(put.json)).toBe(200); // is 400: kind must be 1-64 of [a-z0-9_-]
});
