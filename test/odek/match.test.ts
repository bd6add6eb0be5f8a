import { describe, expect, it } from 'vitest';
import type { Session } from '../../lib/client/types.js';
import { parseOdekFile, type OdekSession } from '../../lib/odek/format.js';
import { firstDifference, sameJson, sameText, storedOnlyRefs } from '../../lib/odek/match.js';
import { newFormat, toolHeavy } from '../support/odek-files.js';

describe('sameText: a stored string against the file string it came from', () => {
  it.each([
    ['same', 'same', true],
    ['other', 'same', false],
    ['key sk-proj-abc123 here', 'key [REDACTED] here', true],
    ['key sk-proj-abc123 there', 'key [REDACTED] here', false],
    ['a 1 b 2 c', 'a [REDACTED] b [REDACTED] c', true],
    ['a 1 c', 'a [REDACTED] b [REDACTED] c', false],
    ['secret', '[REDACTED]', true],
    ['', '[REDACTED]', true],
    ['[REDACTED]', '[REDACTED]', true],
    ['x[REDACTED]', '[REDACTED]y', false],
    // Tool-call arguments the pipeline re-serialised after redacting a value.
    [
      '{"user": "deploy", "password": "hunter2"}',
      '{"user":"deploy","password":"[REDACTED]"}',
      true,
    ],
    ['{"user": "root", "password": "hunter2"}', '{"user":"deploy","password":"[REDACTED]"}', false],
    ['{"a": 1}', '{"a":1}', false], // nothing redacted: the pipeline keeps arguments byte for byte
    // Arguments that were not JSON and stopped being loadable once redacted.
    ['login --token ghp_xxx', '{"redacted":true}', true],
    ['{"x": 1}', '{"redacted":true}', false],
  ])('%j ~ %j → %s', (file, stored, expected) => {
    expect(sameText(file, stored)).toBe(expected);
  });
});

function session(file: Record<string, unknown>): OdekSession {
  const r = parseOdekFile(JSON.stringify(file));
  if (!r.ok) throw new Error(r.reason);
  return r.session;
}

/** What the server would store for the file: times and revision of its own. */
function stored(file: OdekSession, change: (s: Session) => void = () => undefined): Session {
  const s = structuredClone({
    ...file,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    revision: 1,
    episode_taint_tracked: true,
  }) as Session;
  change(s);
  return s;
}

describe('firstDifference', () => {
  const file = session(newFormat());
  const heavy = session(toolHeavy());

  it('is null for the same content, whatever the times, turns and revision', () => {
    expect(firstDifference(file, stored(file))).toBeNull();
    expect(
      firstDifference(
        heavy,
        stored(heavy, (s) => (s.turns = 99)),
      ),
    ).toBeNull();
  });

  it.each<[string, (s: Session) => void, string]>([
    ['task', (s) => (s.task = 'other'), 'task'],
    ['model', (s) => (s.model = 'gpt-5'), 'model'],
    ['provider', (s) => (s.provider = ''), 'provider'],
    [
      'a message more',
      (s) => s.messages.push({ role: 'user', content: 'more' }),
      'messages: 5 in the file, 6 stored',
    ],
    ['content', (s) => (s.messages[3]!.content = 'Keep it open.'), 'messages[3].content'],
    [
      'reasoning',
      (s) => (s.messages[2]!.reasoning_content = 'no'),
      'messages[2].reasoning_content',
    ],
    [
      'a field added to a message',
      (s) => (s.messages[1]!.name = 'bob'),
      'messages[1]: fields differ',
    ],
    [
      'a ref uri',
      (s) => (s.external_refs[0]!.uri = 'https://github.com/acme/app/issues/43'),
      'external_refs[0]: not stored',
    ],
    ['sandbox cleared', (s) => (s.sandbox = false), 'sandbox'],
  ])('finds %s', (_name, change, where) => {
    expect(firstDifference(file, stored(file, change))).toBe(where);
  });

  it('a ref stored beyond the file is no difference (refs are add-only), and is counted', () => {
    const more = stored(file, (s) =>
      s.external_refs.push({
        kind: 'x',
        uri: 'y',
        created_by: 'z',
        read_only: false,
        created_at: '',
      }),
    );
    expect(firstDifference(file, more)).toBeNull();
    expect(storedOnlyRefs(file, more)).toBe(1);
    expect(storedOnlyRefs(file, stored(file))).toBe(0);
  });

  it('finds a change deep in a tool call and in an unknown message field', () => {
    expect(
      firstDifference(
        heavy,
        stored(heavy, (s) => (s.messages[20]!.tool_calls![1]!.function.arguments = 'ls')),
      ),
    ).toBe('messages[20].tool_calls[1].function.arguments');
    expect(
      firstDifference(
        heavy,
        stored(heavy, (s) => ((s.messages[5] as Record<string, any>).metadata.tags[1] = 'm99')),
      ),
    ).toBe('messages[5].metadata.tags[1]');
  });

  it('allows flags the server derived, and ref times it stamped', () => {
    const plain = session({
      ...newFormat(),
      sandbox: false,
      external_refs: [{ kind: 'doc', uri: 'u', created_by: 'odek' }],
    });
    const derived = stored(plain, (s) => {
      s.untrusted_ingested = true;
      s.episode_untrusted = true;
      s.external_refs[0]!.created_at = '2026-01-01T00:00:00Z';
    });
    expect(firstDifference(plain, derived)).toBeNull();
  });
});

describe('firstDifference of refs the server redacted', () => {
  const ref = (uri: string, read_only = false) => ({
    kind: 'doc',
    uri,
    created_by: 'odek',
    read_only,
  });
  const withRefs = (refs: ReturnType<typeof ref>[]) =>
    session({ ...newFormat(), sandbox: false, external_refs: refs });
  const storedRef = (uri: string) => ({ ...ref(uri), created_at: '2026-01-01T00:00:00Z' });

  it('matches refs that differ only in a secret to the one ref they redacted to', () => {
    // Re-importing such a file answered "exists with different content" (exit 4).
    const file = withRefs([ref('https://h/x?token=sk-a'), ref('https://h/x?token=sk-b', true)]);
    const s = stored(file, (s) => (s.external_refs = [storedRef('https://h/x?token=[REDACTED]')]));
    expect(firstDifference(file, s)).toBeNull();
  });

  it('still finds a ref that matches nothing, and counts a stored ref no file ref made', () => {
    const file = withRefs([ref('https://h/x?token=sk-a'), ref('https://h/y')]);
    const redactedOnly = stored(
      file,
      (s) => (s.external_refs = [storedRef('https://h/x?token=[REDACTED]')]),
    );
    expect(firstDifference(file, redactedOnly)).toBe('external_refs[1]: not stored');
    // Without a placeholder the stored ref stands for one file ref only.
    const twice = withRefs([ref('https://h/x'), ref('https://h/x', true)]);
    expect(
      firstDifference(
        twice,
        stored(twice, (s) => (s.external_refs = [storedRef('https://h/x')])),
      ),
    ).toBeNull(); // the file's own duplicate, as before
    const two = withRefs([ref('https://h/a'), ref('https://h/b')]);
    const one = stored(two, (s) => (s.external_refs = [storedRef('https://h/a')]));
    expect(firstDifference(two, one)).toBe('external_refs[1]: not stored');
    const extra = stored(two, (s) => s.external_refs.push(storedRef('https://h/c')));
    // A ref stored beyond the file's: no import can drop it (refs are add-only), so no difference.
    expect([firstDifference(two, extra), storedOnlyRefs(two, extra)]).toEqual([null, 1]);
  });
});

describe('sameJson', () => {
  it.each([
    [{ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: undefined }, false],
    [{ a: [1, 2] }, { a: [2, 1] }, false],
    [{ a: null }, { a: {} }, false],
    ['[REDACTED]', 'secret', false],
    [[], {}, false],
  ])('%j = %j → %s', (a, b, expected) => {
    expect(sameJson(a, b)).toBe(expected);
  });
});
