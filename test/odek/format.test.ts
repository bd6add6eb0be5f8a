import { describe, expect, it } from 'vitest';
import {
  createBody,
  odekFileText,
  parseOdekFile,
  refInput,
  replaceBody,
} from '../../lib/odek/format.js';
import { newFormat, oldFormat, tainted } from '../support/odek-files.js';

function parsed(text: string) {
  const r = parseOdekFile(text);
  if (!r.ok) throw new Error(r.reason);
  return r;
}

describe('odek session files', () => {
  it('reads an old file with defaults for what it lacks', () => {
    const { session, unknownFields } = parsed(JSON.stringify(oldFormat()));
    expect(unknownFields).toEqual([]);
    expect(session).toMatchObject({
      id: 'old-session-1',
      provider: '',
      external_refs: [],
      sandbox: false,
      untrusted_ingested: false,
      episode_untrusted: false,
      turns: 0,
    });
    // OpenAI's `content: null` on a tool-call turn reads as odek's "".
    expect(session.messages[2]!.content).toBe('');
    expect(createBody(session)).toEqual({
      id: 'old-session-1',
      task: 'rename the config loader',
      model: 'gpt-4',
      messages: session.messages,
      external_refs: [],
      sandbox: false,
      untrusted_ingested: false,
      episode_untrusted: false,
      // The file's own times go with it, so the imported session keeps them.
      created_at: '2024-03-02T10:00:00Z',
      updated_at: '2024-03-02T10:05:00Z',
    });
    const { created_at: _c, updated_at: _u, ...untimed } = oldFormat() as Record<string, unknown>;
    expect(createBody(parsed(JSON.stringify(untimed)).session)).not.toHaveProperty('created_at');
  });

  it('reads null external_refs as none, and carries the taint flags', () => {
    const body = createBody(parsed(JSON.stringify(tainted())).session);
    expect(body).toMatchObject({
      external_refs: [],
      untrusted_ingested: true,
      episode_untrusted: true,
      provider: 'openai',
    });
  });

  // odek's `Messages []llm.Message` has no `omitempty`: a nil slice is written as null (review s64d).
  it('reads messages: null (a Go nil slice) as no messages', () => {
    const result = parsed(JSON.stringify({ ...oldFormat(), messages: null }));
    expect(result.session.messages).toEqual([]);
    expect(createBody(result.session).messages).toEqual([]);
  });

  it('keeps external refs with their times, and drops a time the create route would refuse', () => {
    const { session } = parsed(JSON.stringify(newFormat()));
    expect(createBody(session).external_refs).toEqual([
      {
        kind: 'github_issue',
        uri: 'https://github.com/acme/app/issues/42',
        created_by: 'odek',
        read_only: false,
        created_at: '2025-01-10T08:00:01Z',
      },
      {
        kind: 'doc',
        uri: 'https://wiki.acme.dev/triage?a=1,b=2',
        created_by: 'alice',
        read_only: true,
        created_at: '2025-01-10T08:00:02Z',
      },
    ]);
    expect(
      refInput({ kind: 'doc', uri: 'u', created_by: 'api', read_only: false, created_at: '' }),
    ).toEqual({ kind: 'doc', uri: 'u', created_by: 'api', read_only: false });
    expect(
      refInput({
        kind: 'doc',
        uri: 'u',
        created_by: 'api',
        read_only: false,
        created_at: 'yesterday',
      }),
    ).not.toHaveProperty('created_at');
    expect(replaceBody(session)).not.toHaveProperty('id');
  });

  it('names fields odek does not define, and ignores Satchel bookkeeping in a copied object', () => {
    const r = parsed(
      JSON.stringify({
        ...oldFormat(),
        revision: 7,
        satchel: { writes: [] },
        colour: 'blue',
        notes: [1],
      }),
    );
    expect(r.unknownFields).toEqual(['colour', 'notes']);
    expect(r.session).not.toHaveProperty('colour');
    expect(r.session).not.toHaveProperty('satchel');
    expect(createBody(r.session)).not.toHaveProperty('revision');
  });

  it.each([
    ['{"id": ', /^not JSON( \(at character \d+\))?$/],
    ['[1, 2]', /^not an odek session: not a JSON object$/],
    ['"text"', /^not an odek session: not a JSON object$/],
    [JSON.stringify({ task: 'no id', messages: [] }), /^not an odek session: id: /],
    [
      JSON.stringify({ ...oldFormat(), messages: [{ role: 'robot', content: 'hi' }] }),
      /^not an odek session: messages\.0\.role: /,
    ],
    [
      JSON.stringify({
        ...oldFormat(),
        messages: [{ role: 'tool', content: 'x', tool_calls: 'no' }],
      }),
      /^not an odek session: messages\.0\.tool_calls: /,
    ],
  ])('refuses %s with a reason', (text, reason) => {
    const r = parseOdekFile(text);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });

  it('writes compact JSON with odek fields in odek order, without revision', () => {
    const { session } = parsed(JSON.stringify(newFormat()));
    const stored = {
      ...session,
      created_at: '2025-01-10T08:00:00Z',
      updated_at: '2025-01-10T09:30:00Z',
      revision: 4,
    };
    const text = odekFileText(stored);
    expect(text).not.toMatch(/\n|": /);
    expect(Object.keys(JSON.parse(text))).toEqual([
      'id',
      'created_at',
      'updated_at',
      'model',
      'provider',
      'turns',
      'task',
      'sandbox',
      'messages',
      'external_refs',
      'untrusted_ingested',
      'episode_untrusted',
      'episode_taint_tracked',
    ]);
    expect(JSON.parse(text).messages).toEqual(newFormat().messages);
  });
});
