import { describe, expect, it } from 'vitest';
import { Bm25Index } from '../support/bm25-reference.js';
import { queryTokens, tokenize } from '../../lib/search/tokenize.js';

describe('tokenize', () => {
  it('folds accents and case', () => {
    expect(tokenize('Café RÉSUMÉ naïve')).toEqual(tokenize('cafe resume naive'));
  });

  it('keeps identifiers findable whole and by part', () => {
    const t = tokenize('error: ERR_OSSL_EVP_UNSUPPORTED in parse_config and getUserToken');
    expect(t).toContain('err_ossl_evp_unsupported');
    expect(t).toContain('ossl');
    expect(t).toContain('evp');
    expect(t).toContain('parse_config');
    expect(t).toContain('getusertoken');
    expect(t).toContain('user');
    for (const q of queryTokens('ERR_OSSL_EVP_UNSUPPORTED')) expect(t).toContain(q);
  });

  it('folds accents, Hebrew points and Arabic harakat, but not vowel signs or voicing marks (review)', () => {
    expect(tokenize('Tiếng Việt Ελληνικά ёлка')).toEqual(tokenize('tieng viet ελληνικα елка'));
    expect(tokenize('كَتَبَ')).toEqual(tokenize('كتب'));
    // Marks that are vowels: three Hindi words, not one; Thai "good" and "watch"; Japanese が and か.
    expect(tokenize('मुझे दाल पसंद है')).toEqual(['मुझे', 'दाल', 'पसंद', 'है']);
    expect(new Set([tokenize('दाल')[0], tokenize('दिल')[0], tokenize('दल')[0]]).size).toBe(3);
    expect(tokenize('ดี')).not.toEqual(tokenize('ดู'));
    expect(tokenize('がっこう')).not.toEqual(tokenize('かっこう'));
  });

  it("stems an identifier's whole form as the lower-case word, and keeps plural acronyms whole (review)", () => {
    for (const [camel, lower] of [
      ['PowerShell', 'powershell'],
      ['WebSockets', 'websockets'],
      ['DevOps', 'devops'],
    ])
      expect(tokenize(camel!)).toContain(tokenize(lower!)[0]);
    expect(tokenize('the APIs and GPUs and LLMs')).toEqual(tokenize('the api and gpu and llm'));
    expect(tokenize('XMLHttpRequest')).toEqual(expect.arrayContaining(['xml', 'http', 'request']));
  });

  it('turns CJK runs into bigrams, and mixed text into both', () => {
    expect(tokenize('東京都')).toEqual(['東京', '京都']);
    expect(tokenize('こんにちは')).toContain('にち');
    expect(tokenize('한국어')).toEqual(['한국', '국어']);
    const mixed = tokenize('部署deploy失败');
    expect(mixed).toContain('部署');
    expect(mixed).toContain(tokenize('deploy')[0]);
    expect(mixed).toContain('失败');
  });

  it('stems English words and drops stopwords', () => {
    expect(tokenize('the deployments were failing')).toEqual(tokenize('deployment fails'));
    expect(tokenize('what is the of and')).toEqual([]);
  });

  it('keeps numbers and short codes', () => {
    expect(tokenize('HTTP 503 on v2 api')).toEqual(['http', '503', 'v2', 'api']);
  });
});

describe('BM25', () => {
  const index = new Bm25Index();
  index.add('a', tokenize('the build failed with ERR_OSSL_EVP_UNSUPPORTED on node 17'));
  index.add('b', tokenize('deploy the website to production'));
  index.add('c', tokenize('node version upgrade; the build is green again'));

  it('ranks the document with the rare terms first', () => {
    expect(index.search(queryTokens('ERR_OSSL_EVP_UNSUPPORTED build'), 3).map((s) => s.id)).toEqual(
      ['a', 'c'],
    );
    expect(index.search(queryTokens('deploying websites'), 3).map((s) => s.id)).toEqual(['b']);
  });

  it('replaces and removes documents', () => {
    const i = new Bm25Index();
    i.add('x', tokenize('alpha beta'));
    i.add('x', tokenize('gamma'));
    expect(i.search(['alpha'], 5)).toEqual([]);
    expect(i.search(['gamma'], 5).map((s) => s.id)).toEqual(['x']);
    i.remove('x');
    i.remove('never');
    expect(i.size).toBe(0);
    expect(i.search(['gamma'], 5)).toEqual([]);
  });
});
