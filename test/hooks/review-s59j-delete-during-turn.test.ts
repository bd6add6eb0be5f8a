import { describe, expect, it } from 'vitest';
import { listAll } from '../../lib/storage/prefix.js';
import { text } from '../../lib/storage/port.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { hookApp, REPLY, type App } from '../support/hook-turn.js';
import { openTestS3 } from '../support/s3.js';

// Review s59j (fixed 2026-12-06: deliverOnce takes a 404 after this attempt stored the message as a
// DELETE during the turn: no turn is owed, nothing is created again). A webhook delivery with a model
// configured stores its message, then runs the model turn. When its session is DELETEd (204) while the
// model runs, the turn's append meets a 404. That 404 leaves
// the continue as a `not_found` error, which `deliverOnce` (lib/hooks/hooks.ts) takes for "the session
// does not exist yet": for the delivery's own session (`new`) or a fixed id it creates the session again,
// appends the message again and runs a second model turn; for `latest` it moves the claim to a fresh
// session and stores everything there. The DELETE that answered 204 is undone by background work.
// Contract v1.1: "Deleted means gone. After DELETE ... has answered and its background work has drained,
// no object in the bucket holds the session's task or text".

/** Every object under alice's prefix (markers aside) that holds the payload or the reply. */
async function holding(app: App): Promise<string[]> {
  const found: string[] = [];
  for (const k of await listAll(app.objects, 'ns/alice/')) {
    if (k.includes('/hooks/')) continue;
    const got = await app.objects.get(k);
    const body = got ? text(got.body) : '';
    if (body.includes('quokkaservice') || body.includes('wombatreply')) found.push(k);
  }
  return found;
}

async function setUp(session: string, lambda: boolean, s3 = false) {
  const deleted: number[] = [];
  const { app, chat, createOpsLog, send } = await hookApp({
    session,
    lambda,
    ...(s3 ? { objects: openTestS3('s59j') } : {}),
    // The model answers only once the session holding the delivery was deleted (204).
    during: async (app) => {
      const listed = (await app.call('GET', '/v1/sessions')).json.sessions as { id: string }[];
      for (const s of listed) {
        const res = await app.call('DELETE', `/v1/sessions/${s.id}`);
        deleted.push(res.status);
      }
    },
  });
  if (session === 'latest' || session === 'ops-log')
    expect((await createOpsLog()).status).toBe(201);
  return { app, chat, deleted, send };
}

describe('a webhook whose session is deleted while its model turn runs (review s59j)', () => {
  for (const [lambda, s3] of [
    [false, false],
    [true, false],
    [false, true],
  ] as const)
    for (const session of ['new', 'ops-log', 'latest'])
      it(`${lambda ? 'Lambda' : 'Node'}${s3 ? ' on radosgw' : ''}, ${session} hook: the deleted session stays deleted`, async () => {
        const { app, chat, deleted, send } = await setUp(session, lambda, s3);
        const res = await send();
        await settleAll(app);
        expect(deleted).toEqual([204]);
        const sessions = (await app.call('GET', '/v1/sessions')).json.sessions as { id: string }[];
        const found = await holding(app);
        const back = await Promise.all(
          sessions.map(async (s) =>
            (
              (await app.call('GET', `/v1/sessions/${s.id}`)).json.messages as {
                role: string;
                content: string;
              }[]
            ).map(
              (m) =>
                `${m.role}: ${m.content.includes('quokkaservice') ? 'payload' : m.content.slice(0, 40)}`,
            ),
          ),
        );
        // Before the fix: the session is back (or the payload in a fresh one, `latest`) with the message
        // and a second reply, and a second model call ran.
        expect({
          sessions: sessions.map((s) => s.id),
          objects: found,
          back,
          modelCalls: chat.requests.length,
          status: res.status,
        }).toEqual({
          sessions: [],
          objects: [],
          back: [],
          modelCalls: 1,
          status: lambda ? expect.any(Number) : 202,
        });
        if (lambda) expect(res.status).not.toBe(500);
        // A redelivery of the same delivery id after the DELETE brings nothing back either.
        await send();
        await settleAll(app);
        expect((await app.call('GET', '/v1/sessions')).json.sessions).toEqual([]);
        expect(await holding(app)).toEqual([]);
      }, 60_000);
});

describe('the DELETE from another process on the same store (review s59j)', () => {
  for (const recreate of [false, true])
    it(`fixed-id hook, deleted${recreate ? ' and created again by its user' : ''} while the turn runs`, async () => {
      let other!: App;
      const { app, chat, env, createOpsLog, send } = await hookApp({
        steps: [
          async () => {
            expect((await other.call('DELETE', '/v1/sessions/ops-log')).status).toBe(204);
            if (recreate) {
              const made = await other.call('POST', '/v1/sessions', {
                body: { task: 'a fresh start', id: 'ops-log' },
              });
              expect(made.status).toBe(201);
            }
            return { reply: REPLY };
          },
          { reply: REPLY },
        ],
      });
      other = await makeApp({ env, objects: app.objects });
      expect((await createOpsLog()).status).toBe(201);
      expect((await send('d-2')).status).toBe(202);
      await settleAll(app);
      await settleAll(other);
      const got = await other.call('GET', '/v1/sessions/ops-log');
      // Before the fix: the deleted session is back with the payload and a second reply; or the user's
      // new session under the id got the deleted one's payload and a reply.
      expect({
        status: got.status,
        messages: ((got.json?.messages ?? []) as { role: string }[]).map((m) => m.role),
        modelCalls: chat.requests.length,
      }).toEqual({ status: recreate ? 200 : 404, messages: [], modelCalls: 1 });
    }, 60_000);
});
