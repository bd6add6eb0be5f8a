// Appends grouped into one commit share its revision, not its redaction count (review s50e): each member's
// receipt, write record and audit record counted the whole commit's secrets, so a plain append told its
// device that another device's message held a secret, and the audit log counted one redaction per member.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { StorageUnavailableError, text } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';

const SECRET = `AKIA${'Q'.repeat(15)}3`; // an AWS access key id shape the redactor always takes

type Call = Awaited<ReturnType<typeof makeApp>>['call'];

/**
 * Eight keyed appends to session `id` at once (the first runs alone, the rest queue behind it and go out
 * as one commit); `body(i)` is the i-th's body. Answers them in order, each 200.
 */
async function eight(call: Call, id: string, body: (i: number) => object) {
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      call('POST', `/v1/sessions/${id}/messages`, {
        body: body(i),
        headers: { 'idempotency-key': `${id}-${i}` },
      }),
    ),
  );
  for (const a of answers) expect(a.status).toBe(200);
  return answers;
}

const note = (i: number, secret = i === 5) => ({
  messages: [
    { role: 'user', content: secret ? `note-five my key is ${SECRET}` : `plain note ${i}` },
  ],
});

describe('group commit receipts', () => {
  const own = (i: number) => (i === 5 ? 1 : 0); // only append 5 sent a secret
  const sharedWith5 = (answers: { json: { revision: number } }[]) =>
    answers.filter((a, i) => i !== 5 && a.json.revision === answers[5]!.json.revision);

  it('a plain append grouped with a secret-bearing one answers redactions: 0', async () => {
    const { call, sessions } = await makeApp();
    expect((await call('POST', '/v1/sessions', { body: { id: 'g', task: 'group' } })).status).toBe(
      201,
    );
    const answers = await eight(call, 'g', (i) => note(i));
    expect(JSON.stringify((await call('GET', '/v1/sessions/g')).json)).not.toContain(SECRET);
    // Precondition of the bug: some plain append shared a commit (a revision) with append 5.
    expect(sharedWith5(answers).length).toBeGreaterThan(0);
    expect(answers.map((a) => a.json.redactions)).toEqual(answers.map((_, i) => own(i)));
    // A repeat answers each member's own count, from its write record.
    for (const i of [3, 5]) {
      const again = await call('POST', '/v1/sessions/g/messages', {
        body: note(i),
        headers: { 'idempotency-key': `g-${i}` },
      });
      expect([again.headers.get('idempotent-replayed'), again.json.redactions]).toEqual([
        'true',
        own(i),
      ]);
    }
    // The audit log counts the one redaction once.
    const records = (await call('GET', '/v1/sessions/g/audit')).json.records as {
      redactions: number;
    }[];
    expect(records.reduce((n, r) => n + r.redactions, 0)).toBe(1);
    await sessions.settled();
  });

  it('a commit whose storage answer was lost answers each member its own count too (review)', async () => {
    const local = new LocalStore(mkdtempSync(join(tmpdir(), 'satchel-group-lost-')));
    let lost = 0;
    const objects = Object.create(local) as LocalStore;
    objects.put = async (key, body, opts) => {
      const r = await local.put(key, body, opts);
      // The commit holding append 5's message lands, and its answer is lost (once).
      if (
        lost === 0 &&
        key.endsWith('/sessions/l.json') &&
        opts?.ifMatch &&
        text(body).includes('note-five')
      ) {
        lost++;
        throw new StorageUnavailableError('timeout', undefined, { mayHaveLanded: true });
      }
      return r;
    };
    const { call, sessions } = await makeApp({ objects });
    expect((await call('POST', '/v1/sessions', { body: { id: 'l', task: 'group' } })).status).toBe(
      201,
    );
    const answers = await eight(call, 'l', (i) => note(i));
    expect(lost).toBe(1);
    expect(sharedWith5(answers).length).toBeGreaterThan(0); // append 5's lost-answer commit was a group's
    expect(answers.map((a) => a.json.redactions)).toEqual(answers.map((_, i) => own(i)));
    await sessions.settled();
  });

  it('an append with external refs commits alone: a secret in a ref is counted for it (review)', async () => {
    // The pipeline counts ref redactions for the whole commit: in a group they went to the first member.
    const { call, sessions } = await makeApp();
    expect((await call('POST', '/v1/sessions', { body: { id: 'r', task: 'refs' } })).status).toBe(
      201,
    );
    const ref = { external_refs: [{ kind: 'url', uri: `https://example.com/?k=${SECRET}` }] };
    const answers = await eight(call, 'r', (i) => ({ ...note(i, false), ...(i === 5 ? ref : {}) }));
    expect(answers.map((a) => a.json.redactions)).toEqual(answers.map((_, i) => own(i)));
    expect(sharedWith5(answers)).toEqual([]);
    await sessions.settled();
  });
});
