import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { openTestS3 } from '../support/s3.js';
import { makeApp } from './helpers.js';

// Issue 11's answers through the HTTP API, on the local folder and on radosgw: latest and GET heal when
// a session object disappears behind Satchel's back.

const CAP = 20_000;

const stores: [string, () => ObjectStore | undefined][] = [
  ['local folder', () => undefined],
  ['radosgw', () => openTestS3('trust')],
];

describe.each(stores)('on the %s', (_name, open) => {
  it('latest answers the newest session that exists when the newest listed one vanished, and heals', async () => {
    const objects = open();
    const app = await makeApp(objects ? { objects } : {});
    const ids: string[] = [];
    for (const task of ['oldest', 'middle', 'newest']) {
      const res = await app.call('POST', '/v1/sessions', { body: { task } });
      expect(res.status).toBe(201);
      ids.push(res.json.id);
    }
    // Later (once the creates' log records are stored), deleted in the bucket directly, not through
    // Satchel. (Deleted before its log record lands, a session is listed again once it does, until the
    // next `latest` or GET that finds the object gone heals it.)
    await app.background.drain();
    await app.objects.delete(keys.session('alice', ids[2]!));
    const latest = await app.call('GET', '/v1/sessions/latest');
    expect(latest.status).toBe(200);
    expect(latest.json.task).toBe('middle');
    await app.background.drain();
    const list = await app.call('GET', '/v1/sessions');
    expect(list.json.sessions.map((s: { task: string }) => s.task)).toEqual(['middle', 'oldest']);
    // GET of another vanished one: 404, and the list heals too.
    await app.objects.delete(keys.session('alice', ids[0]!));
    expect((await app.call('GET', `/v1/sessions/${ids[0]}`)).status).toBe(404);
    await app.background.drain();
    const after = await app.call('GET', '/v1/sessions');
    expect(after.json.sessions.map((s: { task: string }) => s.task)).toEqual(['middle']);
  });

  it('latest with every listed session gone is 404, never 503', async () => {
    const objects = open();
    const app = await makeApp(objects ? { objects } : {});
    const res = await app.call('POST', '/v1/sessions', { body: { task: 'only' } });
    await app.objects.delete(keys.session('alice', res.json.id));
    const latest = await app.call('GET', '/v1/sessions/latest');
    expect(latest.status).toBe(404);
  });

  it('an append, PUT or continue whose new content cannot fit answers 413 naming the limit, and writes nothing', async () => {
    const objects = open();
    const env = { SATCHEL_MAX_SESSION_BYTES: String(CAP) };
    const app = await makeApp({ env, ...(objects ? { objects } : {}) });
    const created = await app.call('POST', '/v1/sessions', {
      body: { task: 'small', messages: [{ role: 'user', content: 'hello' }] },
    });
    const id = created.json.id;
    const huge = { role: 'user', content: 'x'.repeat(CAP) };
    const appended = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [huge] },
    });
    expect(appended.status).toBe(413);
    expect(appended.json.detail).toContain(String(CAP));
    expect(appended.json.detail).toMatch(/\(\d+ bytes\)/);
    const put = await app.call('PUT', `/v1/sessions/${id}`, {
      headers: { 'if-match': '"1"' },
      body: { task: 'small', messages: [{ role: 'user', content: 'hello' }, huge] },
    });
    expect(put.status).toBe(413);
    const cont = await app.call('POST', `/v1/sessions/${id}/continue`, {
      body: { message: huge.content },
    });
    expect(cont.status).toBe(413);
    const after = await app.call('GET', `/v1/sessions/${id}`);
    expect(after.json.revision).toBe(1);
    expect(after.json.messages).toEqual([{ role: 'user', content: 'hello' }]);
    const audit = await app.call('GET', `/v1/sessions/${id}/audit`);
    expect(audit.json.records.map((r: { op: string }) => r.op)).toEqual(['create']);
  });

  it('the cap counts the stored object exactly: what fits is kept, and no object is ever over', async () => {
    const objects = open();
    const env = { SATCHEL_MAX_SESSION_BYTES: String(CAP) };
    const app = await makeApp({ env, ...(objects ? { objects } : {}) });
    const stored = async (id: string) =>
      (await app.objects.get(keys.session('alice', id)))!.body.byteLength;
    const filler = (n: number) => ({ role: 'assistant', content: 'f'.repeat(n) });
    const created = await app.call('POST', '/v1/sessions', {
      body: { task: 'near the cap', messages: [{ role: 'user', content: 'hi' }, filler(1000)] },
    });
    const id = created.json.id;
    // Fill to near the cap, then append a message that fits with its write record: nothing goes.
    const grown = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [filler(CAP - (await stored(id)) - 800)] },
    });
    expect(grown.json.dropped_groups).toBe(0);
    // The message's JSON is its content plus 32 bytes; the write record adds about 130 more.
    const fill = CAP - (await stored(id)) - 32 - 200;
    const fits = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'user', content: 'u'.repeat(fill) }] },
    });
    expect(fits.status).toBe(200);
    expect(fits.json.dropped_groups).toBe(0);
    expect(fits.json.bytes).toBe(await stored(id));
    expect(fits.json.bytes).toBeLessThanOrEqual(CAP);
    // Within the record's room, less an earlier write's record (about 140 bytes) this write may drop once the
    // audit compactor has covered it (background work: under load it may have run by now, or not).
    expect(fits.json.bytes).toBeGreaterThan(CAP - 400);
    // One more does not fit: the oldest group after the head goes, and the object stays under the cap.
    const over = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'user', content: 'v'.repeat(600) }] },
    });
    expect(over.json.dropped_groups).toBe(1);
    expect(await stored(id)).toBeLessThanOrEqual(CAP);
  });

  it('a system prompt and task over the cap answer 413 and store nothing; they are never cut', async () => {
    const objects = open();
    const env = { SATCHEL_MAX_SESSION_BYTES: String(CAP) };
    const app = await makeApp({ env, ...(objects ? { objects } : {}) });
    const res = await app.call('POST', '/v1/sessions', {
      body: { task: 'big prompt', messages: [{ role: 'system', content: 's'.repeat(CAP) }] },
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.json.detail).toContain(String(CAP));
    expect((await app.call('GET', '/v1/sessions')).json.sessions).toEqual([]);
  });

  it('a create says what the cap dropped, and the marker says it truly', async () => {
    const objects = open();
    const env = { SATCHEL_MAX_SESSION_BYTES: String(CAP) };
    const app = await makeApp({ env, ...(objects ? { objects } : {}) });
    const system = { role: 'system', content: 'be brief' };
    const headOver = await app.call('POST', '/v1/sessions', {
      body: { task: 'paste', messages: [system, { role: 'user', content: 'p'.repeat(CAP) }] },
    });
    expect(headOver.status).toBe(201);
    expect(headOver.headers.get('satchel-dropped-first-user-message')).toBe('true');
    // The first user message is a group too: the marker after the system prompt counts it.
    expect(headOver.headers.get('satchel-dropped-groups')).toBe('1');
    expect(headOver.json.messages).toEqual([
      system,
      {
        role: 'system',
        content: '[satchel] 1 message group was removed to keep this session under its size limit.',
      },
    ]);
    expect(headOver.json.task).toBe('paste');
    const newestOver = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'two',
        messages: [
          system,
          { role: 'user', content: 'hi' },
          { role: 'user', content: 'q'.repeat(CAP) },
        ],
      },
    });
    expect(newestOver.status).toBe(201);
    expect(newestOver.headers.get('satchel-dropped-groups')).toBe('1');
    expect(newestOver.headers.get('satchel-dropped-first-user-message')).toBeNull();
    expect(newestOver.json.messages.map((m: { content: string }) => m.content)).toEqual([
      'be brief',
      'hi',
      '[satchel] 1 message group was removed to keep this session under its size limit.',
    ]);
  });
});
