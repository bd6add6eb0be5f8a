// Without an embeddings service, the contract's "built-in local embedder" is the word space of words.ts:
// a query word no live session holds is matched to the index's near words (character n-gram vectors, or
// one edit apart). Before 2026-12-06 a misspelled word found nothing: `kubernets deploymnt` answered [].
import { expect, it } from 'vitest';
import { nearWords, oneEditApart } from '../../lib/search/words.js';
import { decodeLexSegment, encodeLexSegment } from '../../lib/search/segment.js';
import type { DocRef, Resolved } from '../../lib/search/lsm.js';
import type { LexDoc } from '../../lib/search/docs.js';
import type { LexSegment } from '../../lib/search/segment.js';
import { tokenize } from '../../lib/search/tokenize.js';
import { makeApp } from '../http/helpers.js';

it('one edit: a letter added, dropped, changed, or two neighbours swapped; never two', () => {
  for (const [a, b] of [
    ['python', 'pyhton'],
    ['receive', 'recieve'],
    ['timeout', 'timout'],
    ['cache', 'caches'],
    ['rust', 'bust'],
    ['ab', 'ba'],
  ])
    expect([oneEditApart(a!, b!), oneEditApart(b!, a!)]).toEqual([true, true]);
  for (const [a, b] of [
    ['python', 'python'],
    ['python', 'pthyon'],
    ['cache', 'cachess'],
    ['abcd', 'badc'],
    ['timeout', 'tmout'],
  ])
    expect([oneEditApart(a!, b!), oneEditApart(b!, a!)]).toEqual([false, false]);
});

function resolved(docs: Record<string, string>, dead: string[] = []): Resolved<LexDoc, LexSegment> {
  const list = Object.entries(docs).map(([id, text]) => {
    const tf = new Map<string, number>();
    const tokens = tokenize(text);
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    return { key: { id, c: 0, r: 1 }, doc: { len: tokens.length, tf } };
  });
  const seg = decodeLexSegment(encodeLexSegment(list));
  const live = new Map<string, DocRef<LexDoc>>();
  list.forEach((d, di) => dead.includes(d.key.id) || live.set(d.key.id, { si: 0, di }));
  return { segments: [seg], live, missing: [] };
}

it('near words are for words no live session holds, of letters, 4 or more long', () => {
  const texts = {
    a: 'kubernetes deployment rollout of the payments service',
    b: 'python traceback in the retry loop',
    c: 'the error code E0502 and log rotation',
    gone: 'postgres vacuum settings',
  };
  const res = resolved(texts, ['gone']);
  const held = (t: string) =>
    [texts.a, texts.b, texts.c].some((text) => tokenize(text).includes(t));
  const near = nearWords(res, tokenize('kubernets deploymnt pyhton E0503 lgo postgress'), held);
  const terms = (w: string) => near.get(tokenize(w)[0]!)?.map((n) => n.term);
  expect(terms('deploymnt')).toEqual(tokenize('deployment'));
  expect(terms('pyhton')).toEqual(tokenize('python'));
  // `kubernets` is stemmed as `kubernetes` is: held, so it needs no near word.
  expect(tokenize('kubernets')).toEqual(tokenize('kubernetes'));
  expect(near.has(tokenize('kubernets')[0]!)).toBe(false);
  // Codes and short words stay exact; a word only a deleted session held is not offered.
  expect(terms('E0503')).toBeUndefined();
  expect(terms('lgo')).toBeUndefined();
  expect(terms('postgress')).toBeUndefined();
  for (const list of near.values())
    for (const n of list)
      (expect(n.weight).toBeGreaterThanOrEqual(0.5), expect(n.weight).toBeLessThan(1));
});

it('a long query looks up the near words of its first 8 unheld words only', () => {
  const res = resolved({
    a: 'alpha bravo charlie delta echoes foxtrot golfer hotels indigo juliet kilos',
  });
  const words = 'alphx bravx charlix deltx echoex foxtrox golfex hotelx indigx julieg kiloz';
  const near = nearWords(res, tokenize(words), (t) =>
    tokenize('alpha bravo charlie delta echoes foxtrot golfer hotels indigo juliet kilos').includes(
      t,
    ),
  );
  expect(near.size).toBe(8);
  expect([...near.keys()]).toEqual(tokenize(words).slice(0, 8));
});

it('through the app: a mistyped query finds its session, with a snippet of the real word; nonsense finds nothing', async () => {
  const app = await makeApp();
  const mk = async (task: string, content: string) =>
    (
      await app.call('POST', '/v1/sessions', {
        body: { task, messages: [{ role: 'user', content }] },
      })
    ).json.id as string;
  const deploy = await mk(
    'rollout',
    'the kubernetes deployment of the payments service stalled on a readiness probe',
  );
  const db = await mk('database', 'postgres vacuum settings for the orders database');
  await mk('lunch', 'where to eat near the office');
  const search = async (query: string) =>
    (await app.call('POST', '/v1/session_search', { body: { action: 'search', query } })).json
      .results as { id: string; snippet: string; score: number }[];

  const typo = await search('deploymnt readines');
  expect(typo.map((h) => h.id)).toEqual([deploy]);
  expect(typo[0]!.snippet).toContain('deployment');
  expect((await search('databse vacum')).map((h) => h.id)).toEqual([db]);
  // The words as spelled still rank as before, and outscore their misspelling.
  const exact = await search('deployment readiness');
  expect(exact.map((h) => h.id)).toEqual([deploy]);
  expect(exact[0]!.score).toBeGreaterThan(typo[0]!.score);
  expect(await search('zqxwv plmokn')).toEqual([]);

  const health = await app.call('GET', '/v1/health', { token: null });
  expect(health.json.embeddings).toEqual({
    configured: false,
    space: 'local/words-v1',
    state: 'ok',
    search: 'lexical, local word vectors',
  });
});
