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
 * The first integer of JSON text (outside its strings) of 16 digits or more that JavaScript's JSON would
 * store as other digits (`12345678901234567890` as `12345678901234567000`, 2^64 as `18446744073709552000`),
 * or null: Satchel keeps JSON as sent (unknown message fields, content parts). Until 2026-12-05 it was
 * taken so.
 */
export function inexactInteger(raw: string): string | null {
  for (const [t] of jsonNumbers(raw)) if (/^-?\d{16,}$/.test(t) && !roundTrips(t)) return t;
  return null;
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
