/**
 * Fixed on 2026-12-04 (found by review): an error answer that is not Satchel's problem JSON (an HTML 404 from a web server or a wrong
 * path prefix, an nginx/ALB "502 Bad Gateway" page in front of a Satchel that is down) becomes a
 * SatchelApiError through problemFrom (lib/client/errors.ts), so the CLI exits 1 ("the server answered an
 * error") and prints up to 500 characters of HTML as the "detail". docs/cli.md says exit 3 is "no answer
 * from SATCHEL_URL … or an answer that is not Satchel's JSON" (a 200 HTML page already gets 3). Worse, for
 * `continue` a gateway's 502 page is taken for the model turn failing: the CLI says to rerun "without
 * storing the message twice", implying the message was stored, when the request may never have reached
 * Satchel.
 *
 * Consequence: scripts that treat 1 as "Satchel refused this" and 3 as "server not reachable / wrong URL"
 * take the wrong branch; the user sees an HTML dump and false advice.
 *
 * Fix: lib/client/client.ts request(): an error status whose body is not problem JSON (content-type not
 * application/problem+json / no `title`) should throw SatchelResponseError (or a SatchelConnectionError
 * for 502/504 from a gateway, which may have landed), which main.ts maps to exit 3; continue.ts should
 * only give the "message was stored" advice for a problem+json 502 from Satchel.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { misbehavingServer } from '../support/misbehaving-server.js';
import { satchel } from './run.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const html = (status: number, text: string) =>
  misbehavingServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'text/html' });
    res.end(
      `<html><head><title>${text}</title></head><body><h1>${text}</h1><hr>nginx</body></html>`,
    );
  }, closers);

describe('an error answer that is not Satchel JSON', () => {
  it('an HTML 404 page: exit 3 ("not Satchel\'s JSON"), not 1 with the HTML as the detail', async () => {
    const s = await html(404, '404 Not Found');
    const r = await satchel(['session', 'list'], { SATCHEL_URL: s.url });
    expect(r.stderr).not.toContain('<html>');
    expect(r.code).toBe(3);
  });

  it('continue behind a gateway answering an HTML 502: no "message stored" advice, exit 3', async () => {
    const s = await html(502, '502 Bad Gateway');
    const r = await satchel(['continue', '--id', 'some-session', 'hello'], { SATCHEL_URL: s.url });
    expect(r.stderr).not.toContain('without storing the message twice');
    expect(r.code).toBe(3);
  });
});
