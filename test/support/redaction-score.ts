/**
 * Scores a redactor on a secret corpus: recall (every secret of a positive gone) and near-misses kept
 * (the text unchanged), per kind. Shared by test/pipeline/corpus.test.ts and bench/eval-redaction.ts.
 */
import type { NearMissCase, PositiveCase, SecretCorpus } from './secret-corpus.js';

export interface KindScore {
  kind: string;
  total: number;
  passed: number;
  rate: number;
}

export interface Failure {
  kind: string;
  context: string;
  text: string;
}

export interface Score {
  positives: {
    total: number;
    rate: number;
    kinds: KindScore[];
    failures: Failure[];
    caught: boolean[];
  };
  nearMisses: { total: number; rate: number; kinds: KindScore[]; failures: Failure[] };
}

/** True when no secret of the case is left in the redacted text. */
export function caught(c: PositiveCase, redacted: string): boolean {
  return c.secrets.every((s) => !redacted.includes(s));
}

/** True when the near-miss came back unchanged. */
export function kept(c: NearMissCase, redacted: string): boolean {
  return redacted === c.text;
}

/** Scores `redact` (text in, redacted text out) on the corpus. */
export function scoreCorpus(corpus: SecretCorpus, redact: (text: string) => string): Score {
  const caughtFlags = corpus.positives.map((c) => caught(c, redact(c.text)));
  const keptFlags = corpus.nearMisses.map((c) => kept(c, redact(c.text)));
  return {
    positives: { ...summarise(corpus.positives, caughtFlags), caught: caughtFlags },
    nearMisses: summarise(corpus.nearMisses, keptFlags),
  };
}

function summarise(cases: (PositiveCase | NearMissCase)[], ok: boolean[]) {
  const byKind = new Map<string, KindScore>();
  const failures: Failure[] = [];
  cases.forEach((c, i) => {
    const k = byKind.get(c.kind) ?? { kind: c.kind, total: 0, passed: 0, rate: 0 };
    k.total++;
    if (ok[i]) k.passed++;
    else failures.push({ kind: c.kind, context: c.context, text: c.text });
    byKind.set(c.kind, k);
  });
  const kinds = [...byKind.values()].map((k) => ({ ...k, rate: k.passed / k.total }));
  const passed = ok.filter(Boolean).length;
  return {
    total: cases.length,
    rate: cases.length === 0 ? 1 : passed / cases.length,
    kinds,
    failures,
  };
}
