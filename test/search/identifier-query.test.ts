// Before 2026-12-05 a query typed as an identifier gave three tokens (`PowerShell`: powershel, power,
// shell) and a session had to hold two of them, so a session that said only `powershell` was not found
// by search, DeepSearch or `find`, though its one word is the identifier's whole form. And a plural
// acronym of two letters stayed plural (`PRs` gave `prs`; `APIs` met `api` only through the stemmer), so
// `PR` did not find `PRs`. Now an identifier's whole form counts for its parts, and a plural acronym is its
// singular.
import { expect, it } from 'vitest';
import { deepSearch } from '../../lib/search/engine.js';
import { parseQuery, tokenize, tokensHeld } from '../../lib/search/tokenize.js';
import { makeApp } from '../http/helpers.js';

it('an identifier query finds its lower-case word, and PR finds PRs, in search, DeepSearch and find', async () => {
  const app = await makeApp();
  const mk = async (task: string, content: string) =>
    (
      await app.call('POST', '/v1/sessions', {
        body: { task, messages: [{ role: 'user', content }] },
      })
    ).json.id as string;
  const shell = await mk('powershell profile', 'my powershell profile loads slowly');
  const prs = await mk('review queue', 'three open PRs need a review');
  await mk('power supply', 'the power supply failed; the shell of the case is dented');
  const tool = async (action: string, query: string) =>
    (await app.call('POST', '/v1/session_search', { body: { action, query } })).json;
  const ids = (hits: { id: string }[]) => hits.map((h) => h.id);

  expect(ids((await tool('search', 'PowerShell')).results)).toContain(shell);
  expect(ids((await tool('search', 'PR')).results)).toEqual([prs]);
  expect(ids((await tool('find', 'PowerShell')).sessions)).toEqual([shell]);
  const live = (await app.sessions.manifest.view('alice')).entries;
  expect(ids(await deepSearch(app.sessions, 'alice', live, 'PowerShell', 10))).toContain(shell);
  expect(ids(await deepSearch(app.sessions, 'alice', live, 'PR', 10))).toEqual([prs]);
  // The parts alone still qualify as before (two of three tokens), ranked below the whole word.
  expect(ids((await tool('search', 'PowerShell')).results)[0]).toBe(shell);
});

it('a whole form stands for its parts, not the other way round', () => {
  const q = parseQuery('PowerShell script');
  expect(q.tokens).toEqual([...tokenize('powershell'), 'power', 'shell', ...tokenize('script')]);
  expect(tokensHeld(q, (t) => t === tokenize('powershell')[0])).toBe(3);
  expect(tokensHeld(q, (t) => t === 'power')).toBe(1);
  expect(tokenize('PRs IDs VMs APIs')).toEqual(['pr', 'id', 'vm', 'api']);
  expect(tokenize('AWS')).toEqual(['aws']);
});
