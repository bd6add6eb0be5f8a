import { describe, expect, it } from 'vitest';
import { createRedactor, PLACEHOLDER } from '../../lib/pipeline/redact.js';
import type { Rule } from '../../lib/pipeline/rule.js';
import { rules } from '../../lib/pipeline/rules.js';
import { caught, scoreCorpus } from '../support/redaction-score.js';
import { secretCorpus } from '../support/secret-corpus.js';

// Issue 11: the redactor against the project's seeded corpus of real-format fake secrets and near-misses.

const corpus = secretCorpus();
const redactor = createRedactor(rules);
const redact = (text: string) => redactor.redact(text).text;
const score = scoreCorpus(corpus, redact);

/**
 * The rule table as a naive scanner would use it: every pattern run globally over the whole text, one rule
 * after the other, each match's group replaced; no keywords, boundaries, entropy floors or allow-lists.
 */
function naiveRedact(table: Rule[], text: string): string {
  const ranges: [number, number][] = [];
  for (const rule of table) {
    const re = new RegExp(rule.pattern.source, rule.pattern.flags.replace('y', '') + 'gd');
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      if (m[0].length === 0) re.lastIndex++;
      const group = rule.group ?? 0;
      const span = m.indices?.[group];
      if (!span) continue;
      if (!rule.each) {
        ranges.push([span[0], span[1]]);
        continue;
      }
      const each = new RegExp(rule.each.source, rule.each.flags);
      for (let e = each.exec(m[group]!); e !== null; e = each.exec(m[group]!)) {
        if (e[0].length === 0) each.lastIndex++;
        const inner = e.indices?.[1];
        if (inner) ranges.push([span[0] + inner[0], span[0] + inner[1]]);
      }
    }
  }
  ranges.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  for (const [from, to] of ranges) {
    if (to <= at) continue;
    out += text.slice(at, Math.max(at, from)) + PLACEHOLDER;
    at = to;
  }
  return out + text.slice(at);
}

describe('secret corpus', () => {
  it('is large and varied: >= 1,000 positives over >= 150 kinds, >= 300 near-misses', () => {
    const kinds = new Set(corpus.positives.map((c) => c.kind));
    expect(corpus.positives.length).toBeGreaterThanOrEqual(1000);
    expect(kinds.size).toBeGreaterThanOrEqual(150);
    expect(corpus.nearMisses.length).toBeGreaterThanOrEqual(300);
    const contexts = new Set(corpus.positives.map((c) => c.context));
    expect(contexts.size).toBeGreaterThanOrEqual(20);
  });

  it('is seeded: the same seed gives the same corpus, another seed other values', () => {
    expect(secretCorpus()).toEqual(corpus);
    const other = secretCorpus(7);
    expect(other.positives.map((c) => c.kind)).toEqual(corpus.positives.map((c) => c.kind));
    const same = other.positives.filter(
      (c, i) => c.secrets.join() === corpus.positives[i]!.secrets.join(),
    );
    expect(same.length).toBeLessThan(corpus.positives.length * 0.01);
  });

  it('places every secret in its text, and no near-miss holds a generated positive', () => {
    for (const c of corpus.positives)
      for (const s of c.secrets) expect(c.text, c.kind).toContain(s);
    const secrets = corpus.positives.flatMap((c) => c.secrets).filter((s) => s.length >= 16);
    const nearMissText = corpus.nearMisses.map((c) => c.text).join('\n');
    expect(secrets.filter((s) => nearMissText.includes(s))).toEqual([]);
  });
});

describe('redactor on the corpus (targets of issue 11)', () => {
  it('recall >= 99.5%', () => {
    const missed = score.positives.failures.map((f) => `${f.kind} [${f.context}]`);
    expect(score.positives.rate, missed.slice(0, 20).join('\n')).toBeGreaterThanOrEqual(0.995);
  });

  it('false positives <= 1%', () => {
    const lost = score.nearMisses.failures.map(
      (f) => `${f.kind} [${f.context}]: ${f.text.slice(0, 80)}`,
    );
    expect(1 - score.nearMisses.rate, lost.slice(0, 20).join('\n')).toBeLessThanOrEqual(0.01);
  });

  it('every kind >= 95%, positives and near-misses alike', () => {
    const weak = [...score.positives.kinds, ...score.nearMisses.kinds].filter((k) => k.rate < 0.95);
    expect(weak.map((k) => `${k.kind}: ${k.passed}/${k.total}`)).toEqual([]);
  });

  it.each([2, 3, 5, 7])(
    'the targets hold on the corpus drawn with seed %i too (fresh values)',
    (seed) => {
      const other = scoreCorpus(secretCorpus(seed), redact);
      const failed = [...other.positives.failures, ...other.nearMisses.failures];
      const failures = failed.map((f) => `${f.kind} [${f.context}]`);
      expect(other.positives.rate, failures.join('\n')).toBeGreaterThanOrEqual(0.995);
      expect(1 - other.nearMisses.rate, failures.join('\n')).toBeLessThanOrEqual(0.01);
    },
  );

  it('a naive list of the same regexes, run one by one, never catches a positive the redactor misses', () => {
    const naiveCatches = (c: (typeof corpus.positives)[number]) =>
      caught(c, naiveRedact(rules, c.text));
    const naiveOnly = corpus.positives.filter(
      (c, i) => !score.positives.caught[i] && naiveCatches(c),
    );
    expect(naiveOnly.map((c) => `${c.kind} [${c.context}]`)).toEqual([]);
    const naiveCaught = corpus.positives.filter(naiveCatches).length;
    expect(score.positives.rate * corpus.positives.length).toBeGreaterThanOrEqual(naiveCaught);
  });

  it('the scores can fail: without the cookie and .env rules the same checks fall short', () => {
    const dropped = new Set(['http-cookie', 'curl-cookie', 'cookie-jar', 'env-key-assignment']);
    const weaker = createRedactor(rules.filter((r) => !dropped.has(r.id)));
    const weak = scoreCorpus(corpus, (t) => weaker.redact(t).text);
    expect(weak.positives.rate).toBeLessThan(score.positives.rate);
    expect(weak.positives.kinds.find((k) => k.kind === 'http-cookie')!.rate).toBeLessThan(0.95);
  });

  it('every kind that is caught is caught with the placeholder in place of the secret', () => {
    for (const c of corpus.positives.slice(0, 400)) {
      const out = redact(c.text);
      if (caught(c, out)) expect(out, c.kind).toContain(PLACEHOLDER);
    }
  });
});
