// Redaction quality on the project's seeded secret corpus (test/support/secret-corpus.ts):
// `npm run eval:redaction` prints recall and the false-positive rate per kind and writes them to
// bench/results.json under `redaction_eval` (the other sections are kept).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRedactor } from '../lib/pipeline/redact.js';
import { rules } from '../lib/pipeline/rules.js';
import { scoreCorpus, type KindScore } from '../test/support/redaction-score.js';
import { secretCorpus } from '../test/support/secret-corpus.js';
import { writeSections } from './results.js';

const TARGETS = { recall: 0.995, falsePositiveRate: 0.01, perKind: 0.95 };

const corpus = secretCorpus();
const redactor = createRedactor(rules);
const started = performance.now();
const score = scoreCorpus(corpus, (text) => redactor.redact(text).text);
const ms = performance.now() - started;

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
const row = (k: KindScore) =>
  [k.kind.padEnd(40), String(k.total).padStart(4), pct(k.rate).padStart(8)].join(' ');
const { positives, nearMisses } = score;
console.log(
  `positives: ${positives.total} over ${positives.kinds.length} kinds; recall ${pct(positives.rate)}`,
);
console.log(
  `near-misses: ${nearMisses.total} over ${nearMisses.kinds.length} kinds; false positives ${pct(1 - nearMisses.rate)}`,
);
console.log('\nrecall per kind (kind, cases, recall):');
for (const k of score.positives.kinds) console.log(row(k));
console.log('\nnear-misses kept per kind (kind, cases, kept):');
for (const k of score.nearMisses.kinds) console.log(row(k));
const failures = [...score.positives.failures, ...score.nearMisses.failures];
if (failures.length > 0) console.log('\nfailures:');
for (const f of failures.slice(0, 60))
  console.log(`  ${f.kind} [${f.context}]: ${JSON.stringify(f.text).slice(0, 160)}`);

const worstKind = Math.min(...[...positives.kinds, ...nearMisses.kinds].map((k) => k.rate));
const fpRate = 1 - nearMisses.rate;
const checks = {
  recall: {
    value: positives.rate,
    limit: `>= ${TARGETS.recall}`,
    pass: positives.rate >= TARGETS.recall,
  },
  falsePositiveRate: {
    value: fpRate,
    limit: `<= ${TARGETS.falsePositiveRate}`,
    pass: fpRate <= TARGETS.falsePositiveRate,
  },
  worstKind: {
    value: worstKind,
    limit: `>= ${TARGETS.perKind}`,
    pass: worstKind >= TARGETS.perKind,
  },
};
const verdicts = Object.entries(checks).map(
  ([k, v]) => `${k} ${v.value.toFixed(4)} (${v.limit}): ${v.pass ? 'PASS' : 'FAIL'}`,
);
console.log(`\nchecks: ${verdicts.join('; ')}`);
console.log(`scored in ${ms.toFixed(0)} ms`);

const round4 = (x: number) => Number(x.toFixed(4));
const byKind = (kinds: KindScore[]) =>
  Object.fromEntries(kinds.map((k) => [k.kind, { cases: k.total, rate: round4(k.rate) }]));
writeSections(join(dirname(fileURLToPath(import.meta.url)), 'results.json'), {
  redaction_eval: {
    date: new Date().toISOString(),
    command: 'npm run eval:redaction',
    corpus: 'test/support/secret-corpus.ts (seeded)',
    rules: rules.length,
    positives: {
      cases: positives.total,
      kinds: positives.kinds.length,
      recall: round4(positives.rate),
    },
    nearMisses: {
      cases: nearMisses.total,
      kinds: nearMisses.kinds.length,
      falsePositiveRate: round4(fpRate),
    },
    checks,
    recallByKind: byKind(positives.kinds),
    nearMissesKeptByKind: byKind(nearMisses.kinds),
  },
});
if (!Object.values(checks).every((c) => c.pass)) process.exitCode = 1;
