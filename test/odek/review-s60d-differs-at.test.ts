// Review s60d (F3): differsAt (lib/odek/match.ts) recursed once per level of the JSON it compares, so tool-call
// arguments nested 20,000 deep (JSON.parse takes them, the server stores them) overflowed V8's stack when a
// re-import compared them with the stored, redacted ones. It now walks with its own stack. Its answers must
// stay what the recursive one said: both are run here on generated pairs, and must agree on every one.
import { describe, expect, it } from 'vitest';
import { differsAt, sameText } from '../../lib/odek/match.js';
import { PLACEHOLDER } from '../../lib/model/session.js';
import { mulberry32 } from '../support/prng.js';

/** differsAt as it was before review s60d (recursive), the reference for the iterative one. */
function recursiveDiffersAt(file: unknown, stored: unknown, path: string): string | null {
  if (typeof file === 'string' && typeof stored === 'string')
    return sameText(file, stored) ? null : path || '(value)';
  if (Array.isArray(file) && Array.isArray(stored)) {
    if (file.length !== stored.length)
      return `${path}: ${file.length} items in the file, ${stored.length} stored`;
    for (let i = 0; i < file.length; i++) {
      const at = recursiveDiffersAt(file[i], stored[i], `${path}[${i}]`);
      if (at) return at;
    }
    return null;
  }
  if (isObject(file) && isObject(stored)) {
    const fileKeys = Object.keys(file);
    const storedKeys = Object.keys(stored);
    if (fileKeys.length !== storedKeys.length) return `${path || '(object)'}: fields differ`;
    const sameKeys = fileKeys.every((k) => Object.hasOwn(stored, k));
    for (let i = 0; i < fileKeys.length; i++) {
      const fk = fileKeys[i]!;
      const sk = sameKeys ? fk : storedKeys[i]!;
      if (!sameKeys && !sameText(fk, sk)) return `${path ? `${path}.` : ''}${fk}`;
      const at = recursiveDiffersAt(file[fk], stored[sk], `${path ? `${path}.` : ''}${fk}`);
      if (at) return at;
    }
    return null;
  }
  if (stored === PLACEHOLDER && (typeof file === 'number' || typeof file === 'boolean'))
    return null;
  return file === stored ? null : path || '(value)';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const rand = mulberry32(60_4);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const KEYS = ['a', 'b', 'token', 'password', 'x y', '0', 'k-sk-abc123'];
const TEXTS = [
  '',
  'hi',
  'sk-abc123',
  'key sk-abc123 here',
  '{"p":"sk-abc123"}',
  '[1,"x"]',
  PLACEHOLDER,
];

/** A random JSON value, at most `depth` levels deep. */
function value(depth: number): unknown {
  const r = rand();
  if (depth <= 0 || r < 0.4) return pick<unknown>([0, -0, 1, 2.5, true, false, null, ...TEXTS]);
  if (r < 0.7) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth - 1));
  const o: Record<string, unknown> = {};
  for (let n = Math.floor(rand() * 4); n > 0; n--) o[pick(KEYS)] = value(depth - 1);
  return o;
}

/** A copy of `v` with a few changes of the kinds a store makes or a file differs by. */
function mutate(v: unknown): unknown {
  if (rand() < 0.7 && (Array.isArray(v) || isObject(v))) {
    if (Array.isArray(v)) {
      const out = v.map((x) => (rand() < 0.5 ? mutate(x) : x));
      if (rand() < 0.1) out.push(value(1));
      return out;
    }
    const entries = Object.entries(v).map(([k, x]): [string, unknown] => [
      rand() < 0.1 ? pick([PLACEHOLDER, ...KEYS]) : k,
      rand() < 0.5 ? mutate(x) : x,
    ]);
    if (rand() < 0.05) entries.push([pick(KEYS), value(1)]);
    return Object.fromEntries(entries);
  }
  const r = rand();
  if (typeof v === 'string' && r < 0.5)
    return v.replace('sk-abc123', PLACEHOLDER).replace('"p":"sk', `"p":"${PLACEHOLDER}`);
  if ((typeof v === 'number' || typeof v === 'boolean') && r < 0.4) return PLACEHOLDER;
  return r < 0.6 ? v : value(1);
}

describe('differsAt, iterative, says what the recursive one said', () => {
  it('on 20,000 generated pairs of shallow values', () => {
    const kinds = { same: 0, differs: 0 };
    for (let n = 0; n < 20_000; n++) {
      const file = value(5);
      const stored = rand() < 0.2 ? file : mutate(file);
      const expected = recursiveDiffersAt(file, stored, '');
      expect(differsAt(file, stored, '')).toBe(expected);
      expect(differsAt(file, stored, 'messages[3]')).toBe(
        recursiveDiffersAt(file, stored, 'messages[3]'),
      );
      kinds[expected === null ? 'same' : 'differs']++;
    }
    // Both kinds of answer, many times: the pairs are not all equal, nor all different.
    expect(kinds.same).toBeGreaterThan(2_000);
    expect(kinds.differs).toBeGreaterThan(2_000);
  });

  it('the one answer that changed: a differing key under a key named "" (before: missed)', () => {
    // The recursion named it '' (an empty path), which its caller took for no difference.
    const file = { '': { '': 1, c: 'sk-abc123' } };
    const stored = { '': { b: 1, c: PLACEHOLDER } };
    expect(recursiveDiffersAt(file, stored, '')).toBeNull();
    expect(differsAt(file, stored, '')).toBe('(value)');
    // As tool-call arguments the pipeline re-serialised: a difference.
    expect(sameText(JSON.stringify(file), JSON.stringify(stored))).toBe(false);
  });

  it('20,000 levels deep: an answer where the recursion overflowed', () => {
    const deep = (n: number, inner: unknown): unknown => {
      let v = inner;
      for (let i = 0; i < n; i++) v = i % 2 ? [v] : { k: v };
      return v;
    };
    expect(() => recursiveDiffersAt(deep(20_000, 'x'), deep(20_000, 'x'), '')).toThrow(RangeError);
    expect(differsAt(deep(20_000, 'sk-abc123'), deep(20_000, PLACEHOLDER), '')).toBeNull();
    const at = differsAt(deep(20_000, 1), deep(20_000, 2), '');
    expect(at).toMatch(/^\[0\]\.k\[0\]\.k.*\.k$/);
    expect(at!.length).toBe(10_000 * '[0].k'.length);
  });
});
