// Review s52d of the first version of near words (words.ts), each case failing on it:
// - a part of an identifier the index holds whole (`shell` of `PowerShell`) got near words (`shelf`);
// - letters-only data (a DNA read) and codes typed in capitals (`ENFILE`, one letter from `EMFILE`) got
//   near words, and a run of few letters passed every filter: seconds of CPU per search on FASTA output;
// - a near word could be another of the query's tokens, so one stored word counted for two.
// The probe's work is counted (nearWork), not timed.
import { expect, it } from 'vitest';
import { decodeLexSegment, encodeLexSegment } from '../../lib/search/segment.js';
import type { DocRef, Resolved } from '../../lib/search/lsm.js';
import type { LexDoc } from '../../lib/search/docs.js';
import type { LexSegment } from '../../lib/search/segment.js';
import { parseQuery, tokenize } from '../../lib/search/tokenize.js';
import { nearWords, nearWork, wordLike } from '../../lib/search/words.js';
import { makeApp } from '../http/helpers.js';

async function appWith(...contents: string[]) {
  const app = await makeApp();
  const ids: string[] = [];
  for (const content of contents) {
    const res = await app.call('POST', '/v1/sessions', {
      body: { task: 'notes', messages: [{ role: 'user', content }] },
    });
    ids.push(res.json.id as string);
  }
  const search = async (query: string) =>
    (
      (await app.call('POST', '/v1/session_search', { body: { action: 'search', query } })).json
        .results as { id: string }[]
    ).map((h) => h.id);
  return { ids, search };
}

it('a query whose identifier the index holds whole gets no near words for its parts', async () => {
  const { ids, search } = await appWith(
    'my powershell profile loads too slowly',
    'the power drill sits on the top shelf',
  );
  expect(tokenize('the power drill sits on the top shelf')).not.toContain(tokenize('shell')[0]);
  expect(parseQuery('PowerShell').tokens).toHaveLength(3);
  expect(await search('PowerShell')).toEqual([ids[0]]);
});

it('codes typed in capitals and letters-only data have no near words', async () => {
  const r = (() => {
    let a = 11;
    return () => ((a = (Math.imul(a, 1103515245) + 12345) >>> 0) >>> 8) / 2 ** 24;
  })();
  const seq = () => Array.from({ length: 60 }, () => 'ACGT'[Math.floor(r() * 4)]).join('');
  const fasta = Array.from({ length: 200 }, (_, k) => `>read_${k}\n${seq()}`).join('\n');
  const { search } = await appWith(
    'the server dies with EMFILE: too many open files, raise ulimit -n',
    'ioctl returned ENOSTR on the device',
    fasta,
  );
  expect(await search('ENFILE')).toEqual([]);
  expect(await search('ENOSR')).toEqual([]);
  expect(await search(seq())).toEqual([]);
  expect(wordLike(seq().toLowerCase().slice(0, 12))).toBe(false);
  expect(wordLike('mississippi')).toBe(true);
});

it('one stored word does not count for two of the query tokens', async () => {
  const { search } = await appWith(
    'react state question',
    'react component with hooks and the router',
  );
  // Neither holds `reactjs`; `react` is the query's other token, not a near word of it.
  expect(await search('react reactjs')).toEqual([]);
});

it('a probe compares at most 4,096 terms closely, however many look near', () => {
  // 30,000 distinct shuffles of ten letters: each has the probe's letters and length.
  const letters = 'abcdefghij';
  const rnd = (() => {
    let a = 5;
    return () => ((a = (Math.imul(a, 1103515245) + 12345) >>> 0) >>> 8) / 2 ** 24;
  })();
  const terms = new Set<string>();
  while (terms.size < 30_000) {
    const w = [...letters];
    for (let i = w.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [w[i], w[j]] = [w[j]!, w[i]!];
    }
    terms.add(w.join(''));
  }
  const docs = [...terms].map((t, i) => ({
    key: { id: `d${i}`, c: 0, r: 1 },
    doc: { len: 1, tf: new Map([[t, 1]]) } as LexDoc,
  }));
  const seg = decodeLexSegment(encodeLexSegment(docs));
  const res: Resolved<LexDoc, LexSegment> = {
    segments: [seg],
    live: new Map<string, DocRef<LexDoc>>(docs.map((d, di) => [d.key.id, { si: 0, di }])),
    missing: [],
  };
  nearWork.checks = 0;
  // Two probes one letter from a term (`z` for its last letter, its first).
  const [first] = terms;
  const probes = [first!.slice(0, 9) + 'z', 'z' + first!.slice(1)];
  const near = nearWords(res, probes, (t) => terms.has(t));
  expect(nearWork.checks).toBeLessThanOrEqual(2 * 4096);
  expect(nearWork.checks).toBeGreaterThan(4096);
  expect(near.size).toBeGreaterThan(0);
});
