import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  capMessages,
  groupsOf,
  isMarker,
  jsonBytes,
  markerText,
  utf8Length,
} from '../../lib/pipeline/cap.js';
import type { Message } from '../../lib/model/session.js';
import { asst, tool, total, user } from '../support/cap-messages.js';

const sys: Message = { role: 'system', content: 'system prompt' };

const markerMsg = (n: number): Message => ({ role: 'system', content: markerText(n) });

describe('utf8Length', () => {
  it('equals the encoded length, surrogate pairs and lone surrogates included', () => {
    for (const s of ['abc', 'é', '€', '😀', 'a😀b', '\ud800', 'x\udc00y', 'mixed ü 😀 中文', '']) {
      expect(utf8Length(s), JSON.stringify(s)).toBe(new TextEncoder().encode(s).byteLength);
    }
  });
});

describe('size cap', () => {
  it('leaves a session under the cap alone (same array)', () => {
    const messages = [sys, user('hi'), asst('hello')];
    expect(capMessages(messages, 100, 10_000).messages).toBe(messages);
  });

  it('drops the oldest groups after the head and adds one marker', () => {
    const messages = [
      sys,
      user('first'),
      ...Array.from({ length: 20 }, (_, i) => asst('x'.repeat(100) + i)),
    ];
    const out = capMessages(messages, 50, 1200);
    expect(total(out.messages, 50)).toBeLessThanOrEqual(1200);
    expect(out.messages.slice(0, 2)).toEqual([sys, user('first')]);
    expect(isMarker(out.messages[2])).toBe(true);
    expect(out.messages[2]!.content).toBe(markerText(out.dropped));
    expect(out.messages[out.messages.length - 1]).toEqual(messages[messages.length - 1]);
  });

  it('updates the one marker instead of adding another, counting all drops', () => {
    const base = [
      sys,
      user('first'),
      ...Array.from({ length: 10 }, (_, i) => asst('y'.repeat(100) + i)),
    ];
    const first = capMessages(base, 50, 900);
    const more = [
      ...first.messages,
      ...Array.from({ length: 5 }, (_, i) => asst('z'.repeat(100) + i)),
    ];
    const second = capMessages(more, 50, 900);
    expect(second.messages.filter(isMarker)).toHaveLength(1);
    expect(second.messages[2]!.content).toBe(markerText(first.dropped + second.dropped));
  });

  it('never splits a tool group', () => {
    const messages = [
      sys,
      user('q'),
      asst('', ['a', 'b']),
      tool('a', 'r'.repeat(300)),
      tool('b', 'r'.repeat(300)),
      asst('done'),
      user('next'),
    ];
    const out = capMessages(messages, 50, 500);
    const ids = new Set(out.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []));
    for (const m of out.messages)
      if (m.role === 'tool') expect(ids.has(m.tool_call_id!)).toBe(true);
    expect(total(out.messages, 50)).toBeLessThanOrEqual(500);
  });

  it('drops the first user message only when the head alone is over; the system prompt is never cut', () => {
    const big = [sys, user('u'.repeat(2000)), asst('a')];
    const headless = capMessages(big, 20, 400);
    // Only the first user message went (one group, which the marker counts); the assistant message fits
    // and stays (until 2026-12-06 every group went with it: review s52f).
    expect(headless).toEqual({
      messages: [sys, { role: 'system', content: markerText(1) }, asst('a')],
      dropped: 1,
      headCut: true,
      fits: true,
    });
    expect(total(headless.messages, 20)).toBeLessThanOrEqual(400);
    // No room for the marker: the system prompt alone.
    const tight = total([sys], 20);
    expect(capMessages(big, 20, tight)).toMatchObject({
      messages: [sys],
      headCut: true,
      fits: true,
    });
    // The system prompt alone is over: nothing under the cap keeps it, so the caller refuses.
    const hugeSystem = [{ role: 'system' as const, content: 's'.repeat(5000) }, user('u')];
    expect(capMessages(hugeSystem, 20, 300).fits).toBe(false);
    expect(capMessages(hugeSystem, 20, tight + 5000).fits).toBe(true);
  });

  it('a marker already there counts on when the first user message goes', () => {
    const messages = [sys, user('first'), asst('x'.repeat(100)), asst('y'.repeat(100))];
    const once = capMessages(
      messages,
      20,
      total([sys, user('first'), asst('y'.repeat(100))], 20) + 120,
    );
    expect(once.messages[2]!.content).toBe(markerText(1));
    const grown = [sys, user('u'.repeat(900)), ...once.messages.slice(2)];
    const cut = capMessages(grown, 20, 400);
    expect(cut.messages).toEqual([
      sys,
      { role: 'system', content: markerText(2) },
      asst('y'.repeat(100)),
    ]);
    expect(cut.dropped).toBe(1);
  });

  it('keeps the head whole and omits the marker when the head fits but the head plus a marker does not', () => {
    const head = [sys, user('u'.repeat(500))];
    const messages = [...head, asst('a'.repeat(300)), asst('b'.repeat(300))];
    const markerBytes = jsonBytes({ role: 'system', content: markerText(2) }) + 1;
    for (const room of [0, 1, markerBytes - 1]) {
      const out = capMessages(messages, 30, total(head, 30) + room);
      expect(out.messages, `room ${room}`).toEqual(head);
      expect(out).toMatchObject({ dropped: 2, headCut: false });
    }
    // With room for the marker, it is there.
    expect(capMessages(messages, 30, total(head, 30) + markerBytes).messages[2]!.content).toBe(
      markerText(2),
    );
  });

  it('a session that does not start with system and user keeps one marker across writes, counting all (review)', () => {
    const greeting = asst('Hello! How can I help?');
    const first = capMessages(
      [greeting, user('FIRST'), ...Array.from({ length: 6 }, (_, i) => user(`${i}`.repeat(300)))],
      20,
      1000,
    );
    expect(first.messages.filter(isMarker)).toEqual([
      { role: 'system', content: markerText(first.dropped) },
    ]);
    const second = capMessages([...first.messages, user('z'.repeat(300))], 20, 1000);
    expect(second.messages.filter(isMarker)).toEqual([
      { role: 'system', content: markerText(first.dropped + second.dropped) },
    ]);
  });

  it("an agent's tool rounds before the first user message go oldest first, the question kept (review)", () => {
    const rounds = Array.from({ length: 40 }, (_, i) => [
      asst('', [`c${i}`]),
      tool(`c${i}`, 'r'.repeat(100)),
    ]).flat();
    const out = capMessages([sys, ...rounds, user('the question'), asst('the answer')], 20, 2000);
    expect(out.headCut).toBe(false);
    expect(out.messages[0]).toEqual(sys);
    // The head is the system prompt and the first user message: the marker follows the question.
    const q = out.messages.findIndex((m) => m.role === 'user');
    expect(out.messages[q]).toEqual(user('the question'));
    expect(out.messages[q + 1]!.content).toBe(markerText(out.dropped));
    expect(out.messages.at(-1)).toEqual(asst('the answer'));
  });

  it('markers elsewhere (an earlier version put one at 0, then a second) become one, counting all', () => {
    const marker = (n: number): Message => ({ role: 'system', content: markerText(n) });
    const messages = [
      marker(2),
      user('x'),
      marker(3),
      ...Array.from({ length: 8 }, () => asst('y'.repeat(100))),
    ];
    const out = capMessages(messages, 20, 800);
    expect(out.messages.filter(isMarker)).toEqual([marker(5 + out.dropped)]);
    expect(out.messages.slice(0, 2)).toEqual([user('x'), marker(5 + out.dropped)]);
  });

  it('groups: an assistant with tool calls takes its results', () => {
    const messages = [sys, user('a'), asst('', ['1']), tool('1', 'r'), user('b')];
    expect(groupsOf(messages, 2).map((g) => [g.start, g.length])).toEqual([
      [2, 2],
      [4, 1],
    ]);
  });

  it('the head is the system prompt and the first user message, wherever it is (contract review)', () => {
    const greeting = asst('Hello! How can I help you today?');
    const big = (c: string) => asst(c.repeat(300));
    const out = capMessages([sys, greeting, user('x'), big('a'), big('b'), big('c')], 20, 800);
    expect(out.headCut).toBe(false);
    // The greeting is the oldest group: it goes first; the first user message stays, the marker after it.
    expect(out.messages.slice(0, 3)).toEqual([sys, user('x'), markerMsg(out.dropped)]);
    // Dropped or not, what stays keeps its order: a greeting kept stays before the first user message.
    const all = [sys, greeting, user('x'), big('a'), big('b')];
    expect(capMessages(all, 20, 900).messages).toEqual(all);
  });

  it('property: never over the cap, head kept when it fits, no orphan tool results, marker count right', () => {
    const message = fc.oneof(
      fc.record({ role: fc.constant('user' as const), content: fc.string({ maxLength: 200 }) }),
      fc.record({
        role: fc.constant('assistant' as const),
        content: fc.string({ maxLength: 200 }),
      }),
    );
    const group = fc.oneof(
      message.map((m) => [m as Message]),
      fc
        .tuple(
          fc.string({ maxLength: 8 }),
          fc.array(fc.string({ maxLength: 200 }), { minLength: 1, maxLength: 3 }),
        )
        .map(([id, results]) => [
          asst(
            '',
            results.map((_, i) => `${id}-${i}`),
          ),
          ...results.map((r, i) => tool(`${id}-${i}`, r)),
        ]),
    );
    fc.assert(
      fc.property(
        fc.array(group, { maxLength: 30 }),
        fc.integer({ min: 300, max: 6000 }),
        (groups, cap) => {
          const messages = [sys, user('first question'), ...groups.flat()];
          const out = capMessages(messages, 40, cap);
          expect(total(out.messages, 40)).toBeLessThanOrEqual(cap);
          expect(out.fits).toBe(true); // the system prompt is small
          expect(out.messages[0]).toEqual(sys);
          if (!out.headCut) expect(out.messages.slice(0, 2)).toEqual([sys, user('first question')]);
          const ids = new Set(out.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []));
          for (const m of out.messages)
            if (m.role === 'tool') expect(ids.has(m.tool_call_id!)).toBe(true);
          const markers = out.messages.filter(isMarker);
          expect(markers.length).toBeLessThanOrEqual(1);
          if (markers.length === 1) expect(markers[0]!.content).toBe(markerText(out.dropped));
          // The marker is left out only when it would not fit.
          if (markers.length === 0 && out.dropped > 0) {
            const marked = [...out.messages];
            marked.splice(out.headCut ? 1 : 2, 0, {
              role: 'system',
              content: markerText(out.dropped),
            });
            expect(total(marked, 40)).toBeGreaterThan(cap);
          }
          JSON.parse(JSON.stringify(out.messages)); // loadable
        },
      ),
      { numRuns: 300 },
    );
  });
});
