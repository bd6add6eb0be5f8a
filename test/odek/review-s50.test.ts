// odek import defects found by review s50d: a numeric secret in tool arguments made a second import of
// the same file "exists with different content", a UTF-8 byte order mark made a file "not JSON", and an
// import whose first user message the size cap left out did not say so.
import { describe, expect, it } from 'vitest';
import { parseOdekFile } from '../../lib/odek/format.js';
import { importOdekFile } from '../../lib/odek/transfer.js';
import { inProcessClient } from '../http/helpers.js';

const client = inProcessClient;

const times = { created_at: '2025-01-10T08:00:00Z', updated_at: '2025-01-10T08:05:00Z' };

describe('odek import', () => {
  it('re-imports a file whose tool arguments hold a numeric password as unchanged', async () => {
    const c = await client();
    const file = JSON.stringify({
      id: 'numeric-pin',
      ...times,
      task: 'log in to the staging box',
      messages: [
        { role: 'user', content: 'log in as bob' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'login', arguments: '{"user":"bob","password":918273645}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', name: 'login', content: 'ok' },
      ],
    });
    expect((await importOdekFile(c, 'numeric-pin.json', file)).status).toBe('created');
    const again = await importOdekFile(c, 'numeric-pin.json', file);
    expect([again.status, again.reason]).toEqual(['unchanged', undefined]);
    // Another difference is still one.
    const changed = file.replace('log in as bob', 'log in as alice');
    expect((await importOdekFile(c, 'numeric-pin.json', changed)).status).not.toBe('unchanged');
  });

  it('takes a file that starts with a UTF-8 byte order mark', async () => {
    const file =
      '\uFEFF' + JSON.stringify({ id: 'bom', ...times, task: 'edited on Windows', messages: [] });
    expect(parseOdekFile(file).ok).toBe(true);
    const out = await importOdekFile(await client(), 'bom.json', file);
    expect([out.status, out.reason]).toEqual(['created', undefined]);
  });

  it('says when the first user message was not stored (with the system prompt, over the cap)', async () => {
    const c = await client({ SATCHEL_MAX_SESSION_BYTES: '4096' });
    const file = {
      id: 'head-too-big',
      task: 'summarise the log',
      messages: [
        { role: 'system', content: 'You summarise logs.' },
        { role: 'user', content: 'Summarise this log:\n' + 'line of log\n'.repeat(600) },
        { role: 'assistant', content: 'It is fine.' },
      ],
    };
    const out = await importOdekFile(c, 'head-too-big.json', JSON.stringify(file));
    expect(out.status).toBe('created');
    expect((await c.get('head-too-big')).session.messages.some((m) => m.role === 'user')).toBe(
      false,
    );
    expect(out.notes.join('; ')).toMatch(/first user message was not stored/);
  });
});
