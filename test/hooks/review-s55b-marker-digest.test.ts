import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/model/digest.js';
import { keys } from '../../lib/model/keys.js';
import { text, utf8 } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { openTestS3 } from '../support/s3.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s55b, finding 2. A delivery's marker kept `digest`, a plain SHA-256 of the raw body, and a delivery
// sent without a delivery header got the id `sha256:<hex of what the signature covers>` (answered in the
// 202, logged, and hashed into the marker's key). Markers stay after the session's DELETE; the payload's
// secrets are redacted in the stored message, which shows everything else: whoever read the bucket (or the
// log) could test a dictionary of guesses offline and recover the redacted password. Now both are an
// HMAC under a key made from the hook's secret; a marker an earlier Satchel wrote, with a plain SHA-256,
// is still compared as such.
const SECRET = 'hook-secret-0123456789abcdef';
const HOOKS = { ops: { secret: SECRET, namespace: 'alice', session: 'ops-log' } };
const payload = (p: string) => JSON.stringify({ type: 'db.credentials_rotated', password: p });
const DICTIONARY = ['123456', 'password', 'letmein', 'sunshine1987', 'qwerty'];
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

function github(body: string) {
  const mac = createHmac('sha256', SECRET).update(body).digest('hex');
  return {
    token: null,
    raw: body,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${mac}` },
  };
}

async function setup(store: 'local' | 'radosgw') {
  return makeApp({
    env: { SATCHEL_HOOKS: JSON.stringify(HOOKS) },
    ...(store === 'radosgw' ? { objects: openTestS3('s55b-digest') } : {}),
  });
}

describe('webhook marker digest and fallback delivery id (review s55b, finding 2)', () => {
  for (const store of ['local', 'radosgw'] as const) {
    it(`${store}: a deleted delivery's marker does not confirm a guess at a redacted secret`, async () => {
      const app = await setup(store);
      const res = await app.call(
        'POST',
        '/v1/hooks/ops',
        signedDelivery(SECRET, payload('sunshine1987'), 'd-1'),
      );
      expect(res.status).toBe(202);
      await settleAll(app);
      const session = (await app.call('GET', '/v1/sessions/ops-log')).json;
      expect(JSON.stringify(session)).not.toContain('sunshine1987');
      expect(session.messages[0].content).toContain('[REDACTED]');
      expect((await app.call('DELETE', '/v1/sessions/ops-log')).status).toBe(204);
      await settleAll(app);
      // The marker stays (a redelivery for a deleted session is a no-op), with its digest.
      const key = keys.hookDelivery('alice', 'ops', await sha256Hex('d-1'));
      const marker = JSON.parse(text((await app.objects.get(key))!.body));
      expect(marker.digest).toMatch(/^[0-9a-f]{64}$/);
      // Before: sha256(payload('sunshine1987')) === marker.digest, found by the dictionary.
      expect(DICTIONARY.find((g) => sha256(payload(g)) === marker.digest)).toBeUndefined();
      // Still one delivery: the same body again is a redelivery (no-op), another body is refused.
      const again = signedDelivery(SECRET, payload('sunshine1987'), 'd-1');
      expect((await app.call('POST', '/v1/hooks/ops', again)).status).toBe(202);
      const other = signedDelivery(SECRET, payload('hunter2'), 'd-1');
      expect((await app.call('POST', '/v1/hooks/ops', other)).status).toBe(202);
      await settleAll(app);
      expect((await app.call('GET', '/v1/sessions/ops-log')).status).toBe(404);
      expect(app.logs.find('webhook delivery refused', 'warn')).toHaveLength(1);
    });
  }

  it('without a delivery header, neither the id nor the marker key confirms a guess', async () => {
    const app = await setup('local');
    const body = payload('sunshine1987');
    const res = await app.call('POST', '/v1/hooks/ops', github(body));
    expect(res.status).toBe(202);
    await settleAll(app);
    // Before: `sha256:${sha256(body)}`, answered, logged, and (hashed again) the marker's key.
    expect(res.json.delivery).toMatch(/^hmac:[0-9a-f]{64}$/);
    for (const guess of DICTIONARY) {
      const oldId = `sha256:${sha256(payload(guess))}`;
      expect(res.json.delivery).not.toBe(oldId);
      const oldKey = keys.hookDelivery('alice', 'ops', sha256(oldId));
      expect(await app.objects.get(oldKey)).toBeNull();
    }
    // The same request again is the same delivery: one message.
    expect((await app.call('POST', '/v1/hooks/ops', github(body))).json.delivery).toBe(
      res.json.delivery,
    );
    await settleAll(app);
    expect((await app.call('GET', '/v1/sessions/ops-log')).json.messages).toHaveLength(1);
  });

  it('a marker an earlier Satchel wrote with a plain SHA-256 is still compared in that form', async () => {
    const app = await setup('local');
    expect(
      (await app.call('POST', '/v1/sessions', { body: { id: 'ops-log', task: 'ops' } })).status,
    ).toBe(201);
    const body = payload('sunshine1987');
    // Claimed by the earlier Satchel, which stopped before appending.
    for (const id of ['old-1', 'old-2']) {
      const old = {
        session: 'ops-log',
        state: 'claimed',
        digest: sha256(body),
        at: new Date().toISOString(),
      };
      const key = keys.hookDelivery('alice', 'ops', await sha256Hex(id));
      await app.objects.put(key, utf8(JSON.stringify(old)));
    }
    // The same body: a redelivery, stored now. Another body under the other id: refused.
    await app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, body, 'old-1'));
    await app.call('POST', '/v1/hooks/ops', signedDelivery(SECRET, payload('hunter2'), 'old-2'));
    await settleAll(app);
    expect((await app.call('GET', '/v1/sessions/ops-log')).json.messages).toHaveLength(1);
    expect(app.logs.find('webhook delivery refused', 'warn')).toHaveLength(1);
  });
});
