/**
 * Each number token of JSON text outside its strings, with where it starts. A scan, not a regular
 * expression: a backtracking one overflows V8's stack on a string of some millions of characters (a 10 MB
 * message), which made a body a 500 and large tool arguments be redacted as plain text.
 */
export function* jsonNumbers(text: string): Generator<[token: string, at: number]> {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i += 2;
        else {
          i++;
          if (d === 34) break;
        }
      }
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < n && isNumberChar(text.charCodeAt(j))) j++;
      yield [text.slice(i, j), i];
      i = j;
    } else i++;
  }
}

/** A digit, `.`, `e`, `E`, `+` or `-`. */
function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;
}

/** Whether parsing and serialising the number token `t` gives it back (`1.50`, `-0`, 2^64 do not). */
export function roundTrips(t: string): boolean {
  return JSON.stringify(Number(t)) === t;
}

/**
 * Text in which a number `changedNumber` refuses may stand, tested first (most bodies skip the scan): one
 * past 2^53 has 16 digits in a row, or 18 significant digits or more, so 16 characters of digits and at
 * most one point from a digit to a digit; a non-zero number read as 0 has an exponent of `-` and 3 digits,
 * or 16 digits after its point. About 1.5 times the time of `\d{16}` alone.
 */
export const MAY_CHANGE = /\d[\d.]{14}\d|[eE]-\d{3}/;

/** A number of JSON text that JavaScript's JSON would store changed, where it starts, and how. */
export interface ChangedNumber {
  token: string;
  at: number;
  /** A non-zero number read as 0 (`1e-400`); else one past 2^53 read as other digits. */
  zero: boolean;
}

/**
 * The first number of JSON text (outside its strings) that JavaScript's JSON would store changed, or null:
 * an integer past 2^53 in plain digits that it prints otherwise (`12345678901234567890` as
 * `12345678901234567000`, 2^64 as `18446744073709552000`, 10^21 as `1e+21`); one past 2^53 written with a
 * point or an exponent and more than 17 significant digits (`12345678901234567890.0`,
 * `1.2345678901234567890e19`), which no double prints as (C's `%.17g` writes 17, some differing from
 * JavaScript's shortest form: `9.9999999999999992e+22` is the double `1e+23`, and is taken); or a non-zero
 * number it reads as 0 (`1e-400`). Satchel keeps JSON as sent (unknown message fields, content parts): until
 * 2026-12-05 plain digits were taken so, and until 2026-12-06 the other forms. A number under 2^53 that
 * loses its last digits (`0.1`, `3.141592653589793238`) is a double's, stored as JavaScript prints it. A
 * number past a double's range (`1e400`) is `overflowingNumber`'s.
 */
export function changedNumber(raw: string): ChangedNumber | null {
  for (const [token, at] of jsonNumbers(raw)) {
    const v = Number(token);
    if (v === 0) {
      if (nonZero(token)) return { token, at, zero: true };
    } else if (Number.isFinite(v) && Math.abs(v) >= 2 ** 53 && !roundTrips(token)) {
      if (/^-?\d+$/.test(token) || significantDigits(token) > 17) return { token, at, zero: false };
    }
  }
  return null;
}

/** Whether a number token has a non-zero digit before its exponent. */
function nonZero(t: string): boolean {
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 101 || c === 69) return false; // e, E
    if (c >= 49 && c <= 57) return true;
  }
  return false;
}

/**
 * How many significant digits a non-zero number token has (those from its first non-zero digit to its
 * last, before its exponent). Loops, not a regular expression: `0+$` is quadratic on a long run of zeros.
 */
function significantDigits(t: string): number {
  let end = t.search(/[eE]/);
  if (end < 0) end = t.length;
  let from = 0;
  while (from < end && !(t.charCodeAt(from) >= 49 && t.charCodeAt(from) <= 57)) from++;
  let to = end;
  while (to > from && !(t.charCodeAt(to - 1) >= 49 && t.charCodeAt(to - 1) <= 57)) to--;
  const point = t.indexOf('.', from);
  return to - from - (point >= 0 && point < to ? 1 : 0);
}

/**
 * The path (`messages[2].content`, as `errors[].path` writes it) of the value that starts at `at` in JSON
 * text a parse took, as keys and indices. A scan, only when a value is refused.
 */
export function jsonPathAt(text: string, at: number): (string | number)[] {
  const path: (string | number)[] = [];
  let key = '""';
  for (let i = 0; i < at; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      let j = i + 1;
      while (text.charCodeAt(j) !== 34) j += text.charCodeAt(j) === 92 /* \ */ ? 2 : 1;
      key = text.slice(i, j + 1);
      i = j;
    } else if (c === 58 /* : */) {
      // The path is sent back in a 400: a key's lone surrogate half is shown as U+FFFD there.
      path[path.length - 1] = (JSON.parse(key) as string).toWellFormed();
    } else if (c === 123 /* { */) path.push('');
    else if (c === 91 /* [ */) path.push(0);
    else if (c === 93 /* ] */ || c === 125 /* } */) path.pop();
    else if (c === 44 /* , */ && typeof path.at(-1) === 'number')
      path.push((path.pop() as number) + 1);
  }
  return path;
}

/** A path of keys and indices as `errors[].path` writes it: `messages[2].content`. */
export function pathText(path: (string | number)[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${p}`))
    .join('');
}

/** The first number of JSON text past a double's range (`1e400`: JSON.parse makes it Infinity), or null. */
export function overflowingNumber(raw: string): string | null {
  for (const [t] of jsonNumbers(raw)) if (!Number.isFinite(Number(t))) return t;
  return null;
}

/**
 * JSON text whose numbers that a parse and serialisation would change (past 2^53, `1.50`, `-0`, `1e400`)
 * stand as marker strings, and `restore`, which puts them back as they were in serialised JSON: tool
 * arguments re-serialised after redaction keep every number as sent (the contract redacts strings only;
 * until 2026-12-05 a snowflake id next to a redacted token came back rounded), and a webhook payload shown
 * re-serialised does too. `restore` also puts back a marker that reached plain text (a field's value
 * quoted in a summary line).
 */
export function exactNumbers(text: string): { json: string; restore: (json: string) => string } {
  const kept: string[] = [];
  const tag = Math.random().toString(36).slice(2, 10); // a string sent as the marker is not taken for one
  const pieces: string[] = [];
  let from = 0;
  for (const [t, at] of jsonNumbers(text)) {
    if (roundTrips(t)) continue;
    pieces.push(text.slice(from, at), `"\\u0000${tag}:${kept.length}\\u0000"`);
    kept.push(t);
    from = at + t.length;
  }
  if (kept.length === 0) return { json: text, restore: (out) => out };
  pieces.push(text.slice(from));
  const marker = new RegExp(`"\\\\u0000${tag}:(\\d+)\\\\u0000"|\0${tag}:(\\d+)\0`, 'g');
  return {
    json: pieces.join(''),
    restore: (out) => out.replace(marker, (m, i?: string, j?: string) => kept[Number(i ?? j)] ?? m),
  };
}
