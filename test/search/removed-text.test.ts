import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { LocalStore } from '../../lib/storage/local.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';
import { holders } from '../support/holders.js';

// Text a trim, a pop or a replace removes leaves every object, not only the results (review): the lexical
// index's older versions (records and the segments holding them) and the manifest's older entries (log
// records and pages holding a replaced task) went only with a delete, or at a major compaction that a
// quiet namespace may never run.

type App = Awaited<ReturnType<typeof makeApp>>;
const NS = 'alice';
const servers: ChatServer[] = [];
afterAll(async () => Promise.all(servers.map((s) => s.close())));

let n = 0;
/** A word no other text holds, whole in the index (letters only). */
const word = () =>
  `zqv${'bcdfghjklm'[n++ % 10]}${Math.random()
    .toString(36)
    .replace(/[^a-z]/g, '')}x`;

const search = async (app: App, query: string) =>
  (
    (await app.call('POST', '/v1/session_search', { body: { action: 'search', query } })).json
      .results as { id: string }[]
  ).map((r) => r.id);

/** A session whose text is in a segment of the index and whose entry is in a page of the manifest. */
async function indexed(app: App, task: string, messages: unknown[]): Promise<string> {
  const made = await app.call('POST', '/v1/sessions', { body: { task, messages } });
  expect(made.status).toBe(201);
  await app.background.drain();
  await app.search.lexical.compact(NS, true);
  await app.sessions.manifest.compact(NS, true);
  await app.background.drain();
  return made.json.id as string;
}

describe('text a write removes leaves every stored object', () => {
  it('trim and pop: the dropped messages leave the index', async () => {
    const app = await makeApp();
    const [trimmed, popped] = [word(), word()];
    const id = await indexed(app, 'a task', [
      { role: 'system', content: 'sys' },
      { role: 'user', content: `first ${trimmed} question` },
      { role: 'assistant', content: `the ${trimmed} answer` },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'second answer' },
      { role: 'user', content: `pasted ${popped} here` },
    ]);
    expect(await search(app, trimmed)).toEqual([id]);
    expect(holders(app.dir, [trimmed, popped])).not.toEqual([]);
    const popRes = await app.call('POST', `/v1/sessions/${id}/pop`, { body: { count: 1 } });
    expect(popRes.status).toBe(200);
    await app.background.drain();
    expect(holders(app.dir, [popped])).toEqual([]);
    const trim = await app.call('POST', `/v1/sessions/${id}/trim`, { body: { keep: 3 } });
    expect(trim.json.dropped).toBe(2);
    await app.background.drain();
    expect(holders(app.dir, [trimmed])).toEqual([]);
    // What stays is still found, at once and after a compaction.
    expect(await search(app, 'second')).toEqual([id]);
    await app.search.lexical.compact(NS, true);
    expect(await search(app, 'second')).toEqual([id]);
    expect(await search(app, trimmed)).toEqual([]);
  });

  it('PUT: a replaced task and replaced text leave the manifest and the index', async () => {
    const app = await makeApp();
    const [oldTask, oldText] = [word(), word()];
    const id = await indexed(app, `fix ${oldTask}`, [
      { role: 'user', content: `about ${oldText}` },
    ]);
    const got = await app.call('GET', `/v1/sessions/${id}`);
    const put = await app.call('PUT', `/v1/sessions/${id}`, {
      body: { ...got.json, task: 'fix another', messages: [{ role: 'user', content: 'about it' }] },
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(put.status).toBe(200);
    await app.background.drain();
    expect(holders(app.dir, [oldTask, oldText])).toEqual([]);
    const list = (await app.call('GET', '/v1/sessions')).json.sessions;
    expect(list.map((s: { id: string; task: string }) => [s.id, s.task])).toEqual([
      [id, 'fix another'],
    ]);
    expect(await search(app, 'about')).toEqual([id]);
  });

  it('a task another process renamed leaves the manifest when this one renames it back (review)', async () => {
    // The scrub was decided by the entry this process last listed: another process's rename in between
    // was never compared, and its task stayed in a manifest page.
    const a = await makeApp();
    const b = await makeApp({ objects: new LocalStore(a.dir) });
    const drain = async () => {
      for (const app of [a, b, a]) await app.background.drain();
    };
    const secret = word();
    const id = (await a.call('POST', '/v1/sessions', { body: { task: 'fix alpha' } })).json.id;
    await drain();
    expect((await a.call('GET', '/v1/sessions')).json.sessions[0].task).toBe('fix alpha');
    const rename = async (app: App, task: string) => {
      const got = await app.call('GET', `/v1/sessions/${id}`);
      const put = await app.call('PUT', `/v1/sessions/${id}`, {
        body: { ...got.json, task },
        headers: { 'if-match': got.headers.get('etag')! },
      });
      expect(put.status).toBe(200);
      await drain();
    };
    await rename(b, `fix ${secret}`);
    await b.sessions.manifest.compact(NS, true); // a page holds B's entry
    await drain();
    expect(holders(a.dir, [secret]).some((h) => h.includes('/m/g/'))).toBe(true);
    await rename(a, 'fix alpha');
    expect(holders(a.dir, [secret])).toEqual([]);
  });

  it("another process's records of an older version that land after a replace drained go (the audit record stays)", async () => {
    // A's create answered; its log and index records were still on their way when B replaced the session
    // and B's prune and scrub ran: they landed after, holding the replaced task and text, and stayed until
    // a compaction. A's check after them reads the object's mark of text removed (`satchel.x`).
    const a = await makeApp();
    const b = await makeApp({ objects: new LocalStore(a.dir) });
    const [task, text] = [word(), word()];
    const made = await a.call('POST', '/v1/sessions', {
      body: { task: `fix ${task}`, messages: [{ role: 'user', content: `about ${text}` }] },
    });
    const id = made.json.id as string;
    const got = await b.call('GET', `/v1/sessions/${id}`);
    const put = await b.call('PUT', `/v1/sessions/${id}`, {
      body: { ...got.json, task: 'fix another', messages: [{ role: 'user', content: 'about it' }] },
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(put.status).toBe(200);
    await b.background.drain();
    // A's records land now (or landed meanwhile: its background runs on its own), after B's prune and scrub.
    await a.background.drain();
    expect(holders(a.dir, [task, text])).toEqual([]);
    for (const app of [a, b]) {
      expect(
        (await app.call('GET', '/v1/sessions')).json.sessions.map((s: { task: string }) => s.task),
      ).toEqual(['fix another']);
      expect(await search(app, text)).toEqual([]);
      expect(await search(app, 'about')).toEqual([id]);
    }
    // One audit record per write, A's create included.
    const audit = join(a.dir, 'ns', NS, 'audit', id);
    const records = readdirSync(audit, { recursive: true }).filter((f) =>
      String(f).endsWith('.json'),
    );
    const ops = records.flatMap((f) =>
      [JSON.parse(readFileSync(join(audit, String(f)), 'utf8'))]
        .flat()
        .map((r: { op: string }) => r.op),
    );
    expect(ops.sort()).toEqual(['create', 'replace']);
  });

  it('a secret a rescan redacts under new SATCHEL_REDACT_VALUES leaves the index and the manifest (review)', async () => {
    // The next append after the operator adds a leaked value rescans the session and redacts it; the
    // index's segment and the manifest's page kept it, since only request secrets counted as removing.
    for (const messages of [[{ role: 'user', content: 'the password is SECRET ok' }], []]) {
      const before = await makeApp();
      const secret = `Qz${word()}pass`;
      const body = JSON.parse(
        JSON.stringify({ task: 'rotate SECRET today', messages }).replace(/SECRET/g, secret),
      );
      const id = await indexed(before, body.task, body.messages);
      expect(holders(before.dir, [secret, secret.toLowerCase()])).not.toEqual([]);
      const after = await makeApp({
        objects: new LocalStore(before.dir),
        env: { SATCHEL_REDACT_VALUES: JSON.stringify([secret]) },
      });
      const res = await after.call('POST', `/v1/sessions/${id}/messages`, {
        body: { messages: [{ role: 'user', content: 'thanks' }] },
      });
      expect(res.json.redactions).toBeGreaterThan(0);
      expect((await after.call('GET', `/v1/sessions/${id}`)).json.task).toBe(
        'rotate [REDACTED] today',
      );
      await after.background.drain();
      expect(holders(before.dir, [secret, secret.toLowerCase()])).toEqual([]);
    }
  });

  it('a pop with Satchel-Secrets: the secret leaves the index and the manifest, not only the session', async () => {
    const app = await makeApp();
    const leaked = `Leaked${word()}9k`;
    const id = await indexed(app, `deploy with ${leaked}`, [
      { role: 'user', content: `the password is ${leaked}` },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(holders(app.dir, [leaked, leaked.toLowerCase()])).not.toEqual([]);
    const headers = { 'satchel-secrets': Buffer.from(JSON.stringify([leaked])).toString('base64') };
    const p = await app.call('POST', `/v1/sessions/${id}/pop`, { body: { count: 1 }, headers });
    expect(p.status).toBe(200);
    await app.background.drain();
    expect(holders(app.dir, [leaked, leaked.toLowerCase()])).toEqual([]);
    expect((await app.call('GET', '/v1/sessions')).json.sessions).toHaveLength(1);
  });

  it("a continue's reply trimmed away leaves its write record, in the object and in packs", async () => {
    // The turn's write record kept the reply's text for a replay, in the object and, once later keyed
    // writes pushed it out, in a pack under k/: a trim or pop left it there for 24 h.
    const secret = word();
    const chat = await startChatServer({ reply: `the answer is ${secret}` });
    servers.push(chat);
    const app = await makeApp({
      env: { SATCHEL_MODEL_URL: chat.url, SATCHEL_MODEL: 'test-model', SATCHEL_MODEL_KEY: 'mk' },
    });
    const made = await app.call('POST', '/v1/sessions', {
      body: { task: 'a task', messages: [{ role: 'system', content: 'sys' }] },
    });
    const id = made.json.id as string;
    const ask = () =>
      app.call('POST', `/v1/sessions/${id}/continue`, {
        body: { message: 'what is it?' },
        headers: { 'idempotency-key': 'ask-1' },
      });
    const first = await ask();
    expect(first.json.reply).toBe(`the answer is ${secret}`);
    for (let i = 0; i < 30; i++) {
      const res = await app.call('POST', `/v1/sessions/${id}/messages`, {
        body: { messages: [{ role: 'user', content: `note ${i}` }] },
        headers: { 'idempotency-key': `note-${i}` },
      });
      expect(res.status).toBe(200);
    }
    await app.background.drain();
    const packs = () => holders(app.dir, ['"k:']).filter((h) => h.includes(`/k/${id}/`));
    expect(packs()).not.toEqual([]);
    expect((await ask()).json.reply).toBe(`the answer is ${secret}`); // from a pack
    const trim = await app.call('POST', `/v1/sessions/${id}/trim`, { body: { keep: 5 } });
    expect(trim.status).toBe(200);
    await app.background.drain();
    expect(holders(app.dir, [secret])).toEqual([]);
    expect(packs()).not.toEqual([]);
    // The repeat still answers the turn (the model is not called again), without the reply.
    const again = await ask();
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toMatchObject({ model_turn: true, revision: first.json.revision });
    expect(again.json).not.toHaveProperty('reply');
    expect(chat.requests).toHaveLength(1);
  });

  it('an append leaves the older versions alone (nothing was removed)', async () => {
    const app = await makeApp();
    const kept = word();
    const id = await indexed(app, 'a task', [{ role: 'user', content: `keep ${kept}` }]);
    const segments = () => holders(app.dir, [kept]).filter((h) => h.includes('/x/g/'));
    const before = segments();
    expect(before).not.toEqual([]);
    const res = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: { messages: [{ role: 'assistant', content: 'noted' }] },
    });
    expect(res.status).toBe(200);
    await app.background.drain();
    expect(segments()).toEqual(before);
  });
});
