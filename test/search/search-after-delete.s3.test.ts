// Review s53h (2026-12-06), fixed the same day; this test failed on the code before the fix.
// docs/design.md: "a deleted session drops out of every result at once". session_search `search` ranks on a
// manifest view up to a second old and read its hits from this process's cache, so a session another device
// had deleted (its DELETE answered) came back with its task and snippet, while find and list left it out.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { describe, expect, it } from 'vitest';
import { openTestS3 } from '../support/s3.js';
import { makeApp, TOKENS } from '../http/helpers.js';

type App = Awaited<ReturnType<typeof makeApp>>;

describe('session_search on one device right after another device deletes or writes', () => {
  it('a session deleted on another device is gone from search, find and list at once', async () => {
    const shared = openTestS3('search-delete');
    const [laptop, phone] = (await Promise.all(
      [0, 1].map(() => makeApp({ objects: shared })),
    )) as App[];
    const word = `qwv${Math.random().toString(36).slice(2, 8)}`;
    const id = (
      await laptop!.call('POST', '/v1/sessions', {
        body: {
          task: `secret plan ${word}`,
          messages: [{ role: 'user', content: `the ${word} plan details` }],
        },
      })
    ).json.id as string;
    const other = (await laptop!.call('POST', '/v1/sessions', { body: { task: 'other' } })).json
      .id as string;
    await laptop!.background.drain();
    const tool = (body: object) => laptop!.call('POST', '/v1/session_search', { body });
    // Warm the laptop's views.
    expect(
      (await tool({ action: 'search', query: word })).json.results.map((r: any) => r.id),
    ).toEqual([id]);
    expect(
      (await tool({ action: 'find', query: word })).json.sessions.map((r: any) => r.id),
    ).toEqual([id]);
    expect((await tool({ action: 'list' })).json.sessions.map((r: any) => r.id)).toContain(id);
    const del = await phone!.call('DELETE', `/v1/sessions/${id}`, { token: TOKENS.phone });
    expect(del.status).toBe(204);
    const search = (await tool({ action: 'search', query: word })).json;
    const find = (await tool({ action: 'find', query: word })).json;
    const list = (await tool({ action: 'list' })).json;
    const rest = (await laptop!.call('GET', '/v1/sessions')).json;
    expect(rest.sessions.map((s: any) => s.id)).toEqual([other]);
    expect({
      search: search.results.map((r: any) => r.id),
      find: find.sessions.map((r: any) => r.id),
      list: list.sessions.map((r: any) => r.id),
    }).toEqual({ search: [], find: [], list: [other] });
  });
});
