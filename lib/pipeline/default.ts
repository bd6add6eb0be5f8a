import { createRedactor } from './redact.js';
import { rules } from './rules.js';
import { createSavePipeline, type SavePipeline } from './save.js';

/**
 * The production save pipeline: every rule of the table, plus the configured known secret values.
 * `rulesVersion` changes with the table (any field of a rule), `knownValues` or `WALK`, so a stored
 * session saved under an older table is scanned whole on its next save. `unversionedValues` are redacted
 * wherever a write's scan looks (its new messages and fields, or all of it on a rescan) but stay out of
 * the fingerprint: adding or rotating one rescans nothing already stored.
 */
export function defaultPipeline(options: {
  maxSessionBytes: number;
  knownValues?: string[];
  unversionedValues?: string[];
}): SavePipeline {
  const knownValues = options.knownValues ?? [];
  // Every field of every rule (a threshold too: a lower one finds secrets an older table let through).
  const signature =
    JSON.stringify(rules, (_, v: unknown) => (v instanceof RegExp ? String(v) : v)) +
    '\n' +
    knownValues.join('\n') +
    WALK;
  return createSavePipeline({
    redactor: createRedactor(rules, {
      knownValues: [...knownValues, ...(options.unversionedValues ?? [])],
    }),
    rulesVersion: fnv32(signature),
    maxSessionBytes: options.maxSessionBytes,
  });
}

function fnv32(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/**
 * What the redaction does besides the rules (save.ts `redactMessage` and `redactJson`; redact.ts
 * `knownForms`, `decodedViews` and its lists: documented examples, placeholder shapes, references): a new
 * value whenever that changes, so sessions stored before it are scanned again on their next save.
 * 2 (2026-12-02): tool calls whole, unknown fields' names, secret-sounding keys at any depth,
 * JSON-escaped known values, secrets split across content parts. 3 (2026-12-03): text scanned again with
 * `\/` and `%XX` escapes undone; text parts scanned run together. 4 (2026-12-04): `\u00XX` escapes undone
 * too; known values searched in the views, and form-encoded (`+`); every field of a rule fingerprinted.
 * 5 (2026-12-04): inline files whose bytes are text (`data:` URLs, base64 fields) redacted as that text.
 * 6 (2026-12-04): such files also in base64url and UTF-16, `DATA:`, and whatever media type they name.
 * 7 (2026-12-04): `data:` URLs anywhere in a string; UTF-8 with control characters, UTF-16 without a
 * byte order mark, Latin-1; MCP `blob` and Bedrock `bytes` fields. 8 (2026-12-05): keys split across text
 * parts where a word runs on into a piece, or where a part alone matched a shorter key; `data:` URLs
 * streamed in parts, in groups with blanks, or with colons in their parameters; UTF-16 without a byte
 * order mark whose first characters are not ASCII. 9 (2026-12-06): `pass`/`pwd` names and name/value
 * pairs in JSON; `\u`-escaped and wrapped-base64 forms of known values. 10 (2026-12-06): JSON of any
 * depth; arrays of strings read as command lines, and header pairs in `…headers` arrays as header lines.
 * 13 (2026-12-07): full-width forms (`password＝…`) read as ASCII. 14 (2026-12-07): tool-call arguments
 * whose JSON repeats a key re-serialised, never kept as sent with an earlier value's secret (review s61d).
 * 15 (2026-12-07): a repeated pair name that is a cookie's reads its value as the header.
 * 16 (2026-12-07): a `data:` URL streamed in text parts read as the parts run together, whatever their
 * widths; wrapped base64 of 16 to 59 columns after other text read whole (review s62r).
 * 17 (2026-12-07): a key streamed in pieces right after such a URL read whole, not as its base64 (s62h).
 * 18 (2026-12-07): a string under `arguments` that starts as JSON walked as a tool call's arguments (s65f).
 * 19 (2026-12-07): only a `function_call` or `mcp_call` part's, and text when not JSON; a key's tail not cut
 * from a long part that starts with `Done.`, `Next:`, `README.md` or `exit_code=0` (review s65i).
 */
const WALK = '\nwalk:19';
