/**
 * Fixed on 2026-12-04 (found by review): the text renderers in lib/cli/render.ts (transcript, sessionTable via table/oneLine, searchHits)
 * write stored strings (task, message content, tool results, model, ref uris) to the terminal verbatim,
 * control characters included. Session content is often untrusted (webhook payloads, tool output, imported
 * files: the store even flags sessions `untrusted_ingested`), and the save pipeline does not strip escapes.
 *
 * Consequence: `satchel session show` / `session list` / `search` on a session holding ESC sequences lets
 * that content drive the user's terminal: clear or rewrite the screen (hiding or faking transcript lines),
 * set the window title, write the clipboard (OSC 52), emit hyperlinks. Reading a transcript should be safe.
 *
 * Fix: lib/cli/render.ts: pass every stored string through a `printable()` that replaces C0 controls other
 * than \n and \t, DEL and C1 controls with visible escapes (e.g. `\x1b` → `\u241b` or `^[`), in transcript,
 * table/oneLine and searchHits (the --json output is already escaped by JSON.stringify).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';
import { satchel } from './run.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startSatchelServer();
  const c = new SatchelClient({ url: server.url });
  await c.create({
    id: 'escapes',
    task: 'harmless task \x1b[2J\x1b[H\x1b]0;pwned\x07',
    messages: [
      { role: 'user', content: 'summarise this issue' },
      { role: 'assistant', content: 'ok \x1b]52;c;cm0gLXJmIH4K\x07 done' },
    ],
  });
});
afterAll(() => server.close());

// ESC, BEL and the C1 CSI/OSC introducers: what makes a terminal act instead of print.
const CONTROL = /[\x07\x1b\x9b\x9d]/;

describe('stored text with terminal escape sequences', () => {
  it('session show prints it inert', async () => {
    const r = await satchel(
      ['session', 'show', 'escapes'],
      { SATCHEL_URL: server.url },
      { tty: true },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('harmless task');
    expect(r.stdout).not.toMatch(CONTROL);
  });

  it('session list prints it inert', async () => {
    const r = await satchel(['session', 'list'], { SATCHEL_URL: server.url }, { tty: true });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
  });
});
