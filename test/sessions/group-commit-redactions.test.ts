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

describe('group commit receipts', () => {
  it('a plain append grouped with a secret-bearing one answers redactions: 0', async () => {
    const { call, sessions } = await makeApp();
    expect((await call('POST', '/v1/sessions', { body: { id: 'g', task: 'group' } })).status).toBe(
      201,
    );
    // Many appends at once: the first runs alone, the rest queue behind it and go out as one commit.
    const sends = Array.from({ length: 8 }, (_, i) =>
      call('POST', '/v1/sessions/g/messages', {
        body: {
          messages: [
            { role: 'user', content: i === 5 ? `my key is ${SECRET}` : `plain note ${i}` },
          ],
        },
        headers: { 'idempotency-key': `k-${i}` },
      }),
    );
    const answers = await Promise.all(sends);
    for (const a of answers) expect(a.status).toBe(200);
    // The secret was redacted once, by append 5.
    expect(answers[5]!.json.redactions).toBe(1);
    const session = (await call('GET', '/v1/sessions/g')).json;
    expect(JSON.stringify(session)).not.toContain(SECRET);
    // Precondition of the bug: some plain append shared a commit (a revision) with append 5.
    const shared = answers.filter(
      (a, i) => i !== 5 && a.json.revision === answers[5]!.json.revision,
    );
    expect(shared.length).toBeGreaterThan(0);
    // Every plain append redacted nothing.
    const plain = answers.filter((_, i) => i !== 5).map((a) => a.json.redactions);
    expect(plain).toEqual(plain.map(() => 0));
    // A repeat answers each member's own count, from its write record.
    for (const i of [3, 5]) {
      const again = await call('POST', '/v1/sessions/g/messages', {
        body: {
          messages: [
            { role: 'user', content: i === 5 ? `my key is ${SECRET}` : `plain note ${i}` },
          ],
        },
        headers: { 'idempotency-key': `k-${i}` },
      });
      expect([again.headers.get('idempotent-replayed'), again.json.redactions]).toEqual([
        'true',
        i === 5 ? 1 : 0,
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
        key.endsWith('/sessions/g.json') &&
        opts?.ifMatch &&
        text(body).includes('note-five')
      ) {
        lost++;
        throw new StorageUnavailableError('timeout', undefined, { mayHaveLanded: true });
      }
      return r;
    };
    const { call, sessions } = await makeApp({ objects });
    expect((await call('POST', '/v1/sessions', { body: { id: 'g', task: 'group' } })).status).toBe(
      201,
    );
    const sends = Array.from({ length: 8 }, (_, i) =>
      call('POST', '/v1/sessions/g/messages', {
        body: {
          messages: [
            {
              role: 'user',
              content: i === 5 ? `note-five my key is ${SECRET}` : `plain note ${i}`,
            },
          ],
        },
        headers: { 'idempotency-key': `k-${i}` },
      }),
    );
    const answers = await Promise.all(sends);
    for (const a of answers) expect(a.status).toBe(200);
    expect(lost).toBe(1);
    // Precondition: append 5 shared its (lost-answer) commit with other members.
    const shared = answers.filter(
      (a, i) => i !== 5 && a.json.revision === answers[5]!.json.revision,
    );
    expect(shared.length).toBeGreaterThan(0);
    expect(answers.map((a) => a.json.redactions)).toEqual(answers.map((_, i) => (i === 5 ? 1 : 0)));
    await sessions.settled();
  });

  it('an append with external refs commits alone: a secret in a ref is counted for it (review)', async () => {
    // The pipeline counts ref redactions for the whole commit: in a group they went to the first member.
    const { call, sessions } = await makeApp();
    expect((await call('POST', '/v1/sessions', { body: { id: 'r', task: 'refs' } })).status).toBe(
      201,
    );
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call('POST', '/v1/sessions/r/messages', {
          body: {
            messages: [{ role: 'user', content: `plain note ${i}` }],
            ...(i === 5
              ? { external_refs: [{ kind: 'url', uri: `https://example.com/?k=${SECRET}` }] }
              : {}),
          },
          headers: { 'idempotency-key': `r-${i}` },
        }),
      ),
    );
    expect(answers.map((a) => a.json.redactions)).toEqual(answers.map((_, i) => (i === 5 ? 1 : 0)));
    expect(
      answers.filter((a, i) => i !== 5 && a.json.revision === answers[5]!.json.revision),
    ).toEqual([]);
    await sessions.settled();
  });
});
