import { describe, expect, it } from 'vitest';
import { NO_TOKENS_CONFIGURED } from '../../lib/http/auth.js';
import { makeApp, TOKENS } from '../http/helpers.js';
import { satchel } from './run.js';

// Review s64g, finding 3: a server without SATCHEL_TOKENS (wrangler dev without .dev.vars, a Worker or
// Lambda deployed before its secret) answers every request 401 saying so. The CLI replaced that detail with
// "set SATCHEL_TOKEN to one of its tokens", or added that SATCHEL_TOKEN is not one of them: the list is empty.

/** The CLI against an app in process: one without tokens where open mode is not allowed (a Worker's), or alice's. */
async function cliOn(tokens: 'none' | 'alice') {
  const app = await makeApp(tokens === 'none' ? { env: { SATCHEL_TOKENS: '' } } : {});
  const fetcher = ((input: RequestInfo | URL, init?: RequestInit) =>
    app.app.fetch(new Request(input as RequestInfo, init))) as typeof fetch;
  return (env: Record<string, string>) =>
    satchel(
      ['session', 'list'],
      { SATCHEL_URL: 'http://satchel.test', ...env },
      { fetch: fetcher },
    );
}

describe('a 401 from a server with no SATCHEL_TOKENS (review s64g)', () => {
  it("prints the server's detail and no contradicting advice, with or without SATCHEL_TOKEN", async () => {
    const cli = await cliOn('none');
    for (const env of [{}, { SATCHEL_TOKEN: 'tok_dev_4Fz9' }] as Record<string, string>[]) {
      const r = await cli(env);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`satchel: Unauthorized: ${NO_TOKENS_CONFIGURED}\n`);
      expect(r.stderr).toContain('.dev.vars');
      expect(r.stderr).not.toMatch(/one of (its|the server's) tokens/);
    }
  });

  it('other 401s keep their texts', async () => {
    const cli = await cliOn('alice');
    expect((await cli({ SATCHEL_TOKEN: 'wrong' })).stderr).toBe(
      "satchel: Unauthorized: the token is not known. SATCHEL_TOKEN is not one of the server's tokens " +
        '(its SATCHEL_TOKENS); check it, and that SATCHEL_URL is the server you mean.\n',
    );
    expect((await cli({})).stderr).toBe(
      'satchel: Unauthorized: this server needs a token. Set SATCHEL_TOKEN to one of its tokens ' +
        '(its SATCHEL_TOKENS).\n',
    );
    expect((await cli({ SATCHEL_TOKEN: TOKENS.laptop })).code).toBe(0);
  });
});
