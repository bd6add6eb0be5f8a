import { describe, expect, it } from 'vitest';
import { fitContext, ownMessageLast } from '../../lib/continue/context.js';
import { toChatMessage } from '../../lib/continue/model.js';
import { jsonBytes } from '../../lib/pipeline/cap.js';
import type { Message } from '../../lib/model/session.js';

const sys: Message = { role: 'system', content: 'be brief' };
const u = (n: number, size = 10): Message => ({ role: 'user', content: `u${n}`.padEnd(size, '.') });
const a = (n: number, size = 10): Message => ({
  role: 'assistant',
  content: `a${n}`.padEnd(size, '.'),
});
const call = (...ids: string[]): Message => ({
  role: 'assistant',
  content: '',
  tool_calls: ids.map((id) => ({
    id,
    type: 'function' as const,
    function: { name: 'session_search', arguments: '{"action":"list"}' },
  })),
});
const result = (id: string, size = 10): Message => ({
  role: 'tool',
  content: 'r'.repeat(size),
  tool_call_id: id,
});
/** What the model request carries of the messages (the budget counts that, not what is stored). */
const bytes = (...ms: Message[]) => ms.reduce((n, m) => n + jsonBytes(toChatMessage(m)), 0);

describe('fitContext', () => {
  const cases: { name: string; messages: Message[]; budget: number; want: Message[] }[] = [
    {
      name: 'everything fits',
      messages: [sys, u(1), a(1), u(2)],
      budget: 10_000,
      want: [sys, u(1), a(1), u(2)],
    },
    { name: 'empty', messages: [], budget: 100, want: [] },
    {
      name: 'oldest dropped first, system kept',
      messages: [sys, u(1), a(1), u(2)],
      budget: bytes(sys, a(1), u(2)),
      want: [sys, a(1), u(2)],
    },
    {
      name: 'exactly at the budget keeps the message',
      messages: [sys, u(1), a(1), u(2)],
      budget: bytes(sys, u(1), a(1), u(2)),
      want: [sys, u(1), a(1), u(2)],
    },
    {
      name: 'no system message: newest only',
      messages: [u(1), a(1), u(2)],
      budget: bytes(a(1), u(2)),
      want: [a(1), u(2)],
    },
    {
      name: 'a tool group is kept whole',
      messages: [sys, u(1), call('c1', 'c2'), result('c1'), result('c2'), a(1), u(2)],
      budget: bytes(sys, call('c1', 'c2'), result('c1'), result('c2'), a(1), u(2)),
      want: [sys, call('c1', 'c2'), result('c1'), result('c2'), a(1), u(2)],
    },
    {
      name: 'a tool group that does not fit whole is dropped whole',
      messages: [sys, u(1), call('c1', 'c2'), result('c1'), result('c2'), a(1), u(2)],
      budget: bytes(sys, result('c1'), result('c2'), a(1), u(2)),
      want: [sys, a(1), u(2)],
    },
    {
      name: 'an older group that would fit is not kept once a newer one did not (newest suffix only)',
      messages: [sys, u(1, 5), a(1, 500), u(2)],
      budget: bytes(sys, u(1, 5), u(2)) + 10,
      want: [sys, u(2)],
    },
    {
      // Review s50f: 45 KB of reasoning per assistant message pushed out the session's first messages,
      // though the request carries none of it (nor parts, nor unknown fields).
      name: 'what the request does not carry (reasoning, unknown fields) is not counted',
      messages: [
        sys,
        u(1),
        { ...a(1), reasoning_content: 'r'.repeat(50_000), extra: 'x'.repeat(9_000) },
        u(2),
      ],
      budget: bytes(sys, u(1), a(1), u(2)),
      want: [
        sys,
        u(1),
        { ...a(1), reasoning_content: 'r'.repeat(50_000), extra: 'x'.repeat(9_000) },
        u(2),
      ],
    },
    {
      name: 'the newest message stays even alone over the budget',
      messages: [sys, u(1), u(2, 5000)],
      budget: 100,
      want: [sys, u(2, 5000)],
    },
    {
      name: 'an orphan tool result (its call gone) is left out',
      messages: [sys, result('gone'), u(1), a(1)],
      budget: 10_000,
      want: [sys, u(1), a(1)],
    },
    {
      name: 'a system message that is not first is an ordinary message',
      messages: [u(1), sys, u(2)],
      budget: bytes(sys, u(2)),
      want: [sys, u(2)],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(fitContext(c.messages, c.budget)).toEqual(c.want);
    });
  }

  it('never returns more bytes than the budget unless only the newest group remains', () => {
    const messages: Message[] = [sys];
    for (let i = 0; i < 50; i++)
      messages.push(
        u(i, 10 + ((i * 37) % 90)),
        call(`c${i}`),
        result(`c${i}`, (i * 53) % 200),
        a(i, (i * 71) % 120),
      );
    for (const budget of [200, 500, 1000, 3000, 10_000]) {
      const fitted = fitContext(messages, budget);
      expect(bytes(...fitted), `budget ${budget}`).toBeLessThanOrEqual(budget);
      // A suffix of the conversation, after the system message.
      expect(fitted[0]).toBe(sys);
      const rest = fitted.slice(1);
      expect(messages.slice(messages.length - rest.length)).toEqual(rest);
      // Never starts inside a tool group.
      expect(rest[0]?.role).not.toBe('tool');
    }
  });
});

describe('ownMessageLast', () => {
  const mine = u(2);
  const cases: { name: string; messages: Message[]; own: Message | undefined; want: Message[] }[] =
    [
      {
        name: 'already last',
        messages: [sys, u(1), a(1), mine],
        own: mine,
        want: [sys, u(1), a(1), mine],
      },
      {
        name: 'a turn stored after it moves before it',
        messages: [sys, u(1), mine, a(1)],
        own: mine,
        want: [sys, u(1), a(1), mine],
      },
      {
        name: 'a whole tool group stored after it moves before it, in order',
        messages: [sys, u(1), mine, call('c'), result('c'), a(1)],
        own: mine,
        want: [sys, u(1), call('c'), result('c'), a(1), mine],
      },
      {
        name: 'not found: unchanged',
        messages: [sys, u(1), a(1)],
        own: mine,
        want: [sys, u(1), a(1)],
      },
      {
        name: 'no own message: unchanged',
        messages: [sys, mine, a(1)],
        own: undefined,
        want: [sys, mine, a(1)],
      },
      {
        name: 'the same text twice: the later one is ours',
        messages: [sys, mine, a(1), mine, a(2)],
        own: { ...mine },
        want: [sys, mine, a(1), a(2), mine],
      },
    ];
  for (const c of cases) {
    it(c.name, () => {
      expect(ownMessageLast(c.messages, c.own)).toEqual(c.want);
    });
  }
});
