// Contract: "ETag of a session is "<revision>" (strong, the decimal revision)"; "412 If-Match does not
// match". docs/api.md: If-Match takes the tag as sent back ("7"), a bare revision (7), *, W/"7"; "a tag
// that is not a revision never matches". RFC 9110 13.1.1: entity-tags are opaque strings; "04" is not "4".
// parseIfMatch (lib/http/context.ts) reads the digits out of any token and splits a malformed field into
// pieces, so headers naming no ETag the server ever sent made a conditional write land (review s52g; fixed
// 2026-12-06: a tag matches only as written, and a field that is not a list of tags never matches).
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';

const messages = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'u1' },
  { role: 'assistant', content: 'a1' },
];

describe('If-Match that is not the session ETag', () => {
  for (const header of ['"01"', '"1"garbage', '"1"x"2"']) {
    it(`PUT with If-Match: ${header} is 412 and writes nothing`, async () => {
      const app = await makeApp();
      const c = await app.call('POST', '/v1/sessions', { body: { id: 'im', task: 't', messages } });
      expect(c.headers.get('etag')).toBe('"1"');
      const r = await app.call('PUT', '/v1/sessions/im', {
        body: { task: 'overwritten', messages: [] },
        headers: { 'if-match': header },
      });
      const g = await app.call('GET', '/v1/sessions/im');
      expect(r.status).toBe(412);
      expect(g.json.revision).toBe(1);
      expect(g.json.task).toBe('t');
    });
  }
});

it('the forms the docs name still match: the tag, a bare revision, a weak tag, lists, and *', async () => {
  const app = await makeApp();
  await app.call('POST', '/v1/sessions', { body: { id: 'ok', task: 't', messages } });
  let revision = 1;
  for (const make of [
    (r: number) => `"${r}"`,
    (r: number) => `${r}`,
    (r: number) => `W/"${r}"`,
    (r: number) => `"99", "${r}"`,
    (r: number) => ` "${r}" ,`,
    () => '*',
  ]) {
    const res = await app.call('PUT', '/v1/sessions/ok', {
      body: { task: `t${revision}`, messages },
      headers: { 'if-match': make(revision) },
    });
    expect(res.status, make(revision)).toBe(200);
    revision++;
  }
});
