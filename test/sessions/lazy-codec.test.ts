// Lazy encodings (a cold read's parts joined only when needed, sent as pieces by a GET) give exactly the
// bytes the eager join gave: property tests over random message runs, empty arrays included (from review).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  concat,
  encodeCoreParts,
  encodeSession,
  encodedLength,
  encodedPieces,
  joinArrays,
  joinedLength,
  lazyJoin,
  publicChunks,
  publicSession,
  type EncodedMessages,
} from '../../lib/model/codec.js';
import type { StoredSession } from '../../lib/model/session.js';

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** The old eager coreChunks on an eager prior (copied from 41a4547^). */
function oldMessagesJson(list: unknown[], prior: EncodedMessages | undefined): Uint8Array {
  if (
    !prior ||
    prior.messages.length > list.length ||
    !prior.messages.every((m, i) => m === list[i])
  )
    return enc(list);
  const added = list.slice(prior.messages.length);
  if (added.length === 0) return prior.json;
  const tail = new TextEncoder().encode(
    (prior.messages.length > 0 ? ',' : '') + JSON.stringify(added).slice(1),
  );
  return concat(prior.json.subarray(0, prior.json.byteLength - 1), tail);
}

const msg = fc.record({
  role: fc.constantFrom('user', 'assistant', 'tool', 'system'),
  content: fc.string({ maxLength: 8 }),
});

function sessionOf(messages: unknown[], metadata?: Record<string, unknown>): StoredSession {
  return {
    id: 'x',
    created_at: '2026-12-01T00:00:00.000Z',
    updated_at: '2026-12-01T00:00:00.000Z',
    model: '',
    provider: '',
    turns: 1,
    task: 't',
    sandbox: false,
    messages,
    external_refs: [],
    untrusted_ingested: false,
    episode_untrusted: false,
    episode_taint_tracked: true,
    revision: 3,
    ...(metadata ? { metadata } : {}),
  } as unknown as StoredSession;
}

// messages split into runs: first run (possibly empty) then rest runs (possibly empty), then "added"
const scenario = fc.tuple(
  fc.array(msg, { maxLength: 4 }),
  fc.array(fc.array(msg, { maxLength: 3 }), { maxLength: 5 }),
  fc.array(msg, { maxLength: 3 }),
  fc.boolean(),
  fc.boolean(),
);

describe('review: lazy encodings are byte-identical to the eager join', () => {
  it('length, json, pieces', () => {
    fc.assert(
      fc.property(scenario, ([first, rest]) => {
        const all = [first, ...rest].flat();
        const f = enc(first);
        const r = rest.map(enc);
        const lazy = lazyJoin(all, f, r);
        const eager = joinArrays(f, ...r);
        expect(dec(eager)).toBe(JSON.stringify(all));
        expect(encodedLength(lazy)).toBe(eager.byteLength);
        expect(r.reduce((n, b) => joinedLength(n, b.byteLength), f.byteLength)).toBe(
          eager.byteLength,
        );
        expect(dec(concat(...encodedPieces(lazy)))).toBe(dec(eager));
        expect(dec(lazy.json)).toBe(dec(eager));
        // after forcing: pieces still the same bytes
        expect(dec(concat(...encodedPieces(lazy)))).toBe(dec(eager));
      }),
      { numRuns: 3000 },
    );
  });

  it('encodeCoreParts and publicChunks with a lazy prior match the eager prior and a fresh encoding', () => {
    fc.assert(
      fc.property(scenario, ([first, rest, added, force, meta]) => {
        const prefix = [first, ...rest].flat();
        const list = [...prefix, ...added];
        const session = sessionOf(list, meta ? { k: 'v' } : undefined);
        const f = enc(first);
        const r = rest.map(enc);
        const lazy = lazyJoin(prefix, f, r);
        if (force) void lazy.json;
        const eager: EncodedMessages = { messages: prefix, json: joinArrays(f, ...r) };
        const fresh = dec(encodeSession(session));
        const a = encodeCoreParts(session, lazy);
        const b = encodeCoreParts(session, eager);
        expect(dec(a.core)).toBe(dec(b.core));
        expect(dec(a.messages.json)).toBe(dec(oldMessagesJson(list, eager)));
        expect(dec(a.messages.json)).toBe(JSON.stringify(list));
        expect(fresh.startsWith(dec(a.core))).toBe(true);
        const chunks = publicChunks(session, { prior: lazy })!;
        const chunksEager = publicChunks(session, { prior: eager })!;
        expect(dec(concat(...chunks))).toBe(dec(concat(...chunksEager)));
        expect(JSON.parse(dec(concat(...chunks)))).toEqual(
          JSON.parse(JSON.stringify(publicSession(session))),
        );
        // calling twice (pieces.pop must not mutate shared state)
        const again = publicChunks(session, { prior: lazy })!;
        expect(dec(concat(...again))).toBe(dec(concat(...chunks)));
        expect(dec(lazy.json)).toBe(dec(eager.json));
      }),
      { numRuns: 3000 },
    );
  });
});
