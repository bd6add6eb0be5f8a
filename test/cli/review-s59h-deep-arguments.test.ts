// Review s59h: `satchel session show` printed tool-call arguments through exactJson (a4a76fa), whose
// JSON.stringify was outside its try: arguments nested past V8's stack (the server stores them as sent:
// JSON.parse takes any depth) threw RangeError and the whole transcript failed, where the earlier
// prettyArguments showed them as stored. The session browser's prettyArgs had the same unguarded call.
import { describe, expect, it } from 'vitest';
import { transcript } from '../../lib/cli/render.js';
import { exactJson } from '../../lib/model/exact-json.js';
import { prettyArgs } from '../../lib/ui/client.js';

const deep = '['.repeat(20_000) + ']'.repeat(20_000);

describe('tool-call arguments nested deeper than JSON.stringify can write', () => {
  it('exactJson says "not exact" (show them as stored), never throws', () => {
    expect(exactJson(deep)).toBeUndefined();
  });

  it('session show renders the transcript, the arguments as stored', () => {
    const at = '2026-01-01T00:00:00Z';
    const session = {
      id: 's',
      task: 't',
      created_at: at,
      updated_at: at,
      turns: 1,
      revision: 1,
      external_refs: [],
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: deep } }],
        },
      ],
    };
    expect(transcript(session as never)).toContain(deep.slice(0, 100));
  });

  it('the session browser shows them as stored', () => {
    expect(prettyArgs(deep)).toEqual({ text: deep, json: true });
  });
});
