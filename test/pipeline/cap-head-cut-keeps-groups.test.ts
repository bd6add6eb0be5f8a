// Until 2026-12-06, when the head (system prompt + first user message) alone was over the cap, capMessages
// (lib/pipeline/cap.ts, the "head alone is too large" branch) kept only the system prompt and dropped every
// other group too, though they fitted easily; without a system prompt it stored nothing. The contract drops
// the first user message only because the head is over the cap; the groups after it go only as needed ("no
// group goes that would have fitted", docs/design.md). Now the rest is fitted as usual behind the system
// prompt and the marker (newest groups kept), and the marker and the receipt count every group removed.
import { describe, expect, it } from 'vitest';
import { capMessages, isMarker, markerText } from '../../lib/pipeline/cap.js';
import type { Message } from '../../lib/model/session.js';
import { asst, tool, total, user } from '../support/cap-messages.js';
import { makeApp } from '../http/helpers.js';

const sys: Message = { role: 'system', content: 'sys' };
const marker = (n: number): Message => ({ role: 'system', content: markerText(n) });

describe('a head over the cap loses its first user message, not the groups that fit after it', () => {
  it('over HTTP: the small reply and follow-up stay, the marker counts the first user message', async () => {
    const app = await makeApp({ env: { SATCHEL_MAX_SESSION_BYTES: '8192' } });
    const r = await app.call('POST', '/v1/sessions', {
      body: {
        id: 'b',
        task: 't',
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'h'.repeat(9000) }, // the head alone is over the cap
          { role: 'assistant', content: 'small reply' },
          { role: 'user', content: 'small follow-up' },
        ],
      },
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('satchel-dropped-first-user-message')).toBe('true');
    expect(r.headers.get('satchel-dropped-groups')).toBe('1');
    expect(r.json.messages.map((m: { content: string }) => m.content)).toEqual([
      'sys',
      markerText(1),
      'small reply',
      'small follow-up',
    ]);
    // The next write keeps the one marker and its count.
    const next = await app.call('POST', '/v1/sessions/b/messages', {
      body: { messages: [{ role: 'assistant', content: 'another' }] },
    });
    expect(next.status).toBe(200);
    expect(next.json.dropped_groups).toBe(0);
    const got = await app.call('GET', '/v1/sessions/b');
    expect(got.json.messages.filter(isMarker)).toEqual([marker(1)]);
    expect(got.json.messages.at(-1).content).toBe('another');
  });

  it('over HTTP without a system prompt: the small reply stays (nothing was stored)', async () => {
    const app = await makeApp({ env: { SATCHEL_MAX_SESSION_BYTES: '8192' } });
    const r = await app.call('POST', '/v1/sessions', {
      body: {
        task: 't',
        messages: [user('h'.repeat(9000)), { role: 'assistant', content: 'small reply' }],
      },
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('satchel-dropped-first-user-message')).toBe('true');
    expect(r.headers.get('satchel-dropped-groups')).toBe('1');
    expect(r.json.messages.map((m: { content: string }) => m.content)).toEqual([
      markerText(1),
      'small reply',
    ]);
  });

  it('keeps every group that fits, newest first, and drops only the oldest that do not', () => {
    const groups = [asst('a'.repeat(300)), asst('', ['c']), tool('c', 'r'.repeat(300)), asst('b')];
    const all = [sys, user('u'.repeat(2000)), ...groups, user('last')];
    // Room for the system prompt, the marker, and everything after the oldest group.
    const kept = [sys, marker(2), ...groups.slice(1), user('last')];
    const out = capMessages(all, 20, total(kept, 20));
    expect(out).toEqual({ messages: kept, dropped: 2, headCut: true, fits: true });
    // A tool group goes whole: one byte less and it goes with its result.
    const less = capMessages(all, 20, total(kept, 20) - 1);
    expect(less.messages).toEqual([sys, marker(3), asst('b'), user('last')]);
    expect(less.dropped).toBe(3);
    // Everything after the first user message fits: only the first user message goes.
    const roomy = capMessages(all, 20, 1200);
    expect(roomy.messages).toEqual([sys, marker(1), ...groups, user('last')]);
    expect(roomy.dropped).toBe(1);
  });

  it('groups between the system prompt and the first user message are fitted too, in order', () => {
    const greeting = asst('Hello!');
    const out = capMessages([sys, greeting, user('u'.repeat(2000)), asst('reply')], 20, 400);
    expect(out.messages).toEqual([sys, marker(1), greeting, asst('reply')]);
    expect(out).toMatchObject({ dropped: 1, headCut: true, fits: true });
  });

  it("an earlier marker's count carries on; this write's drops are the first user message and what went", () => {
    const all = [sys, user('u'.repeat(2000)), marker(4), asst('x'.repeat(500)), asst('y')];
    const out = capMessages(all, 20, 400);
    expect(out.messages).toEqual([sys, marker(6), asst('y')]);
    expect(out.dropped).toBe(2);
    expect(total(out.messages, 20)).toBeLessThanOrEqual(400);
  });

  it('no room for the marker: the system prompt alone, as when the head fits but not its marker', () => {
    const all = [sys, user('u'.repeat(2000)), asst('a')];
    const out = capMessages(all, 20, total([sys], 20) + 10);
    expect(out).toEqual({ messages: [sys], dropped: 2, headCut: true, fits: true });
  });

  it('the system prompt alone over the cap still refuses', () => {
    const big = { role: 'system' as const, content: 's'.repeat(5000) };
    expect(capMessages([big, user('u'), asst('a')], 20, 300).fits).toBe(false);
  });
});
