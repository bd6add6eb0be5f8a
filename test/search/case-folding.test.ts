// Before 2026-12-04 case was folded by toLowerCase after accent folding, so letters whose cases do not
// round-trip stayed apart: "KIRMIZI" gave "kirmizi" but "kırmızı" (dotless ı) "kırmızı", and "STRASSE"
// "strass" but "straße" "straße"; a Turkish or German query in the other case found nothing. Now ı → i and
// ß (ẞ) → ss after accent folding (ſ → s comes from NFKD), for documents and queries alike.
import { expect, it } from 'vitest';
import { queryTokens, tokenize } from '../../lib/search/tokenize.js';
import { makeApp } from '../http/helpers.js';

it('the same Turkish and German words match across upper and lower case', async () => {
  const app = await makeApp();
  const mk = async (task: string, content: string) =>
    (
      await app.call('POST', '/v1/sessions', {
        body: { task, messages: [{ role: 'user', content }] },
      })
    ).json.id as string;
  const turkish = await mk('araç', 'KIRMIZI ARABA SATILIK');
  const german = await mk('adresse', 'WIR WOHNEN IN DER GROSSEN HAUPTSTRASSE');
  const search = async (query: string) =>
    (
      await app.call('POST', '/v1/session_search', { body: { action: 'search', query } })
    ).json.results.map((h: { id: string }) => h.id);
  expect(await search('kırmızı araba')).toEqual([turkish]);
  expect(await search('großen hauptstraße')).toEqual([german]);
  expect(await search('GROẞEN HAUPTSTRAẞE')).toEqual([german]);
});

it('folds ı, ß, ẞ and ſ; ASCII text is unchanged', () => {
  expect(tokenize('kırmızı')).toEqual(tokenize('KIRMIZI'));
  expect(tokenize('straße')).toEqual(tokenize('STRASSE'));
  expect(queryTokens('STRAẞE')).toContain(tokenize('strasse')[0]);
  expect(tokenize('Waſſer')).toEqual(tokenize('wasser'));
  expect(tokenize('İstanbul')).toEqual(tokenize('istanbul'));
  expect(tokenize('HTTP 503 on v2 api')).toEqual(['http', '503', 'v2', 'api']);
});
