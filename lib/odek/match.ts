import { PARTS_FIELD, textFieldOf, toStoredContent, type ContentPart } from '../model/parts.js';
import { groupCount, isMarker, markerCount } from '../model/cap-marker.js';
import { PLACEHOLDER, type Message } from '../model/session.js';
import type { Session } from '../client/types.js';
import type { ExternalRef } from '../model/session.js';
import type { OdekSession } from './format.js';
import { bareBase64Match, inlineUrlsMatch } from './inline.js';

/**
 * Is a stored session what importing this odek file would have stored? The save pipeline may have
 * redacted secrets on the way in, so a stored string holding `[REDACTED]` matches a file string that
 * equals it with each placeholder standing for some text, tool-call arguments it re-serialised compare as
 * JSON, and `{"redacted":true}` stands for arguments that were not JSON. Flags the server derived
 * (untrusted_ingested and episode_untrusted set from the messages) and times are not differences.
 *
 * Returns null when they match, else where they first differ (for the import report).
 */
export function firstDifference(file: OdekSession, stored: Session): string | null {
  if (!sameText(file.task, stored.task)) return 'task';
  if (!sameText(file.model, stored.model)) return 'model';
  if (!sameText(file.provider, stored.provider)) return 'provider';
  const messages = messagesDiffer(file, stored);
  if (messages) return messages;
  const refs = refsDiffer(file.external_refs, stored.external_refs);
  if (refs) return refs;
  // odek's own files have no metadata: only a file that carries some (an export) is compared on it. An
  // empty `{}` is none: the create and the replace do not send it, so it could never match.
  const metadata =
    file.metadata &&
    Object.keys(file.metadata).length > 0 &&
    differsAt(file.metadata, stored.metadata ?? {}, 'metadata');
  if (metadata) return metadata;
  // Sticky flags: the store may have set one from the messages, but never clears one.
  for (const flag of ['sandbox', 'untrusted_ingested', 'episode_untrusted'] as const) {
    if (file[flag] && !stored[flag]) return flag;
  }
  return null;
}

/** Where the file's messages first differ from the stored ones, allowing for the size cap's marker. */
function messagesDiffer(file: OdekSession, stored: Session): string | null {
  // A session the size cap trimmed as it came in holds the file's head, the cap's marker, its newest.
  const messages = cappedAs(file.messages, stored.messages as Message[]) ?? file.messages;
  if (messages.length !== stored.messages.length) {
    return `messages: ${file.messages.length} in the file, ${stored.messages.length} stored`;
  }
  for (let i = 0; i < messages.length; i++) {
    // Both in the stored form: GET shows parts as `content`, a file (an export) keeps them beside it.
    const [f, s] = [messages[i]!, stored.messages[i]!].map((m) => toStoredContent(m));
    const at = messageDiffers(f!, s!, `messages[${i}]`);
    if (at) return at;
  }
  return null;
}

/**
 * True when the stored messages are the file's as the size cap kept them (its marker among them). A
 * replace then sends the stored ones: the file's would bring back the groups the cap removed, which the
 * server counts as new and, when the cap drops them all again, refuses with 413 (review s64d).
 */
export function cappedAlike(file: OdekSession, stored: Session): boolean {
  return (
    cappedAs(file.messages, stored.messages as Message[]) !== null &&
    messagesDiffer(file, stored) === null
  );
}

/**
 * The file's messages as the size cap would have kept them, when the stored ones hold its marker: the
 * messages before the marker, the marker, and as many of the file's newest as follow it, when the run of
 * the file's messages that the marker stands for is as many whole groups as it counts (plus those of a
 * marker the file already had). The comparison after this checks that the kept messages are the same.
 * Null otherwise.
 */
function cappedAs(file: Message[], stored: Message[]): Message[] | null {
  const at = stored.findIndex((m) => isMarker(m));
  if (at < 0) return null;
  const newest = stored.length - at - 1;
  const gapStart = at + (isMarker(file[at]) ? 1 : 0);
  const gapEnd = file.length - newest;
  if (gapEnd < gapStart || file[gapEnd]?.role === 'tool') return null; // the cap removes whole groups
  const removed = groupCount(file.slice(gapStart, gapEnd)) + markerCount(file[at]);
  if (removed !== markerCount(stored[at])) return null;
  return [...file.slice(0, at), stored[at]!, ...file.slice(gapEnd)];
}

/**
 * Where a message (stored form) differs from the stored one. A secret split across content parts (a key
 * streamed in pieces) is redacted in their text as one: the first text part then holds the redacted text
 * and the other text parts go (as reasoning parts do for a key split across them). So when the stored
 * message has fewer parts than the file's, the file's parts are merged as the pipeline merges them, and
 * the merged text (and the content) is compared with the parts' text as the pipeline writes it then
 * (`mergeMatches`): only when a placeholder there stands for text across a boundary between them. Parts
 * merged with no secret across them (review s58g: "Hello" and "world" stored as "Hello\nworld", a text
 * moved before an image) are a difference, as is any doubt.
 */
function messageDiffers(file: Message, stored: Message, path: string): string | null {
  const fileParts = (file as Record<string, unknown>)[PARTS_FIELD];
  const storedParts = (stored as Record<string, unknown>)[PARTS_FIELD];
  const plain = differsAt(file, stored, path);
  if (!plain || !Array.isArray(fileParts) || !Array.isArray(storedParts)) return plain;
  if (storedParts.length >= fileParts.length) return plain;
  let found: string | undefined;
  for (const merges of MERGES) {
    const layout = mergedLayout(fileParts as ContentPart[], merges);
    if (layout.parts.length !== storedParts.length) continue;
    const at = mergedDiffers(file, stored, layout, storedParts as ContentPart[], path);
    if (at === null) return null;
    if (at) found ??= at;
  }
  return found ?? plain;
}

/** A reasoning part's text field: its text is not the content, but a split key is merged there too. */
const thoughtOf = (p: ContentPart): 'text' | null =>
  textFieldOf(p) === null && typeof p['text'] === 'string' ? 'text' : null;

type FieldOf = (p: ContentPart) => 'text' | 'refusal' | null;

/** The merges the pipeline may have made: of the content's parts, of the reasoning parts, of both. */
const MERGES: FieldOf[][] = [[textFieldOf], [thoughtOf], [textFieldOf, thoughtOf]];

/** A file's parts as merged: each merged part's index, field and the texts of the parts it stands for. */
interface Layout {
  parts: ContentPart[];
  merged: Map<number, Merged>;
}

/** A merged part: its text field, the texts of the parts it stands for, whether they are the content. */
interface Merged {
  field: string;
  texts: string[];
  content: boolean;
}

function mergedLayout(parts: ContentPart[], merges: FieldOf[]): Layout {
  let layout: Layout = { parts, merged: new Map() };
  for (const fieldOf of merges) {
    const out: ContentPart[] = [];
    const merged = new Map<number, Merged>();
    let first: Merged | undefined;
    layout.parts.forEach((p, i) => {
      const field = fieldOf(p);
      const text = field ? p[field] : undefined;
      if (field && typeof text === 'string' && first) return void first.texts.push(text);
      if (field && typeof text === 'string')
        first = { field, texts: [text], content: fieldOf === textFieldOf };
      const entry = typeof text === 'string' ? first : layout.merged.get(i);
      if (entry) merged.set(out.length, entry);
      out.push(p);
    });
    layout = { parts: out, merged };
  }
  return layout;
}

/**
 * Where a message differs from the stored one when its parts are merged as `layout` says; undefined when
 * its merged text is not what the pipeline writes (it did not merge them so): the parts themselves differ.
 */
function mergedDiffers(
  file: Message,
  stored: Message,
  layout: Layout,
  storedParts: ContentPart[],
  path: string,
): string | null | undefined {
  const contentTexts = [...layout.merged.values()].find((m) => m.content && isMerged(m))?.texts;
  const [f, s] = [file, stored].map((m) => {
    const { [PARTS_FIELD]: _parts, ...rest } = m as Record<string, unknown>;
    return contentTexts ? { ...rest, content: '' } : rest;
  });
  const rest = differsAt(f, s, path);
  if (rest) return rest;
  // The content is then the merged text: the file's must be its parts' text for that (as a file's is).
  if (
    contentTexts &&
    !(file.content === contentTexts.join('\n') && mergeMatches(contentTexts, stored.content, true))
  )
    return undefined;
  for (let i = 0; i < layout.parts.length; i++) {
    const at = `${path}.${PARTS_FIELD}[${i}]`;
    const merged = layout.merged.get(i);
    if (!merged || !isMerged(merged)) {
      const differs = differsAt(layout.parts[i], storedParts[i], at);
      if (differs) return differs;
      continue;
    }
    const storedPart = storedParts[i]!;
    const text = storedPart[merged.field];
    if (typeof text !== 'string' || !mergeMatches(merged.texts, text, merged.content))
      return undefined;
    const others = differsAt(
      { ...layout.parts[i], [merged.field]: '' },
      { ...storedPart, [merged.field]: '' },
      at,
    );
    if (others) return others;
  }
  return null;
}

/** A group of two parts or more was merged; a group of one is its part as sent. */
const isMerged = (m: Merged) => m.texts.length > 1;

/**
 * True when `stored` is the parts' `texts` as the pipeline writes them when it merges them: it merges them
 * only for a secret split across them, so a placeholder must stand for text from both sides of a boundary
 * between parts (none, or none across a boundary: a difference, whatever the text). Each placeholder stands
 * for some text. A boundary inside a placeholder's text or at either end of it is a line break or nothing
 * (`runTogether` in lib/pipeline/save.ts keeps one where a secret ends at it); every other boundary is what
 * the pipeline writes there: nothing where it ran the parts' text together (`runTogether`: the content's
 * parts and the reasoning parts), a line break where it redacted the content whole (`withText(parts,
 * out.content)`, the content's parts only: `content`). Gives up (a difference) after MAX_STEPS steps.
 */
function mergeMatches(texts: string[], stored: string, content: boolean): boolean {
  const pieces = stored.split(PLACEHOLDER);
  if (pieces.length < 2) return false;
  const bounds = new Map<number, number>(); // offset in the text run together → boundaries there
  for (let k = 0, at = 0; k < texts.length - 1; k++) {
    at += texts[k]!.length;
    bounds.set(at, (bounds.get(at) ?? 0) + 1);
  }
  const flat = texts.join('');
  const offsets = [...bounds.keys()];
  const budget = { steps: 0 };
  return (content ? ['', '\n'] : ['']).some((sep) =>
    piecesMatch({ flat, bounds, offsets, sep, budget }, pieces),
  );
}

/** The text run together, its boundaries (how many at each offset, the offsets in order) and their `sep`. */
interface Target {
  flat: string;
  bounds: Map<number, number>;
  offsets: number[];
  sep: string;
  budget: { steps: number };
}

/**
 * Whether `pieces` (the stored text split at its placeholders) match the target, one placeholder at least
 * standing for text across a boundary. For each piece, only the first place it can end matters (the next
 * placeholder takes any text after it), and the first it can end at after a placeholder that crossed one.
 */
function piecesMatch(t: Target, pieces: string[]): boolean {
  let ends = matchPiece(t, pieces[0]!, 0, false, false);
  let minEnd = Math.min(...ends); // Infinity: no match
  let minCrossed = Infinity;
  let next = 0; // the first of `offsets` after `minEnd`
  for (let j = 1; j < pieces.length && minEnd !== Infinity; j++) {
    const last = j === pieces.length - 1;
    // A placeholder from `minEnd` to `x` crosses a boundary when one lies strictly between them.
    while (next < t.offsets.length && t.offsets[next]! <= minEnd) next++; // `minEnd` only grows
    const firstBound = t.offsets[next] ?? Infinity;
    let [nextEnd, nextCrossed] = [Infinity, Infinity];
    const piece = pieces[j]!;
    // Each character of a piece is one of the text's or a boundary's: the last starts that far from the end.
    const from = last ? Math.max(minEnd, t.flat.length - piece.length) : minEnd;
    // A start after the first end found after a crossing one can only end later.
    for (let x = from; x <= Math.min(t.flat.length, nextCrossed); x++) {
      if (t.budget.steps++ >= MAX_STEPS) return false;
      const crossed = minCrossed <= x || firstBound < x;
      if ((last && !crossed) || (piece && !t.bounds.has(x) && piece[0] !== t.flat[x])) continue;
      ends = matchPiece(t, piece, x, true, last);
      if (ends.length === 0) continue;
      if (last) return true;
      const end = Math.min(...ends);
      nextEnd = Math.min(nextEnd, end);
      if (crossed) nextCrossed = Math.min(nextCrossed, end);
    }
    [minEnd, minCrossed] = [nextEnd, nextCrossed];
  }
  return false;
}

/**
 * Where `piece` can end when it starts at `x` of the text run together: its characters are the text's,
 * with each boundary's `sep` before the character after it, but a line break or nothing at a boundary next
 * to a placeholder (at `x`, after one, and where the piece ends, before one). The last piece ends with the
 * text, all its boundaries passed; another piece may end before boundaries (the placeholder takes them).
 */
function matchPiece(
  t: Target,
  piece: string,
  x: number,
  afterOne: boolean,
  last: boolean,
): number[] {
  const ends: number[] = [];
  let tail = piece.length; // where the piece's last line breaks start
  while (tail > 0 && piece[tail - 1] === '\n') tail--;
  const stack: [number, number, number][] = [[0, x, 0]]; // in the piece, in the text, boundaries passed
  while (stack.length > 0 && t.budget.steps++ < MAX_STEPS) {
    const [i, z, k] = stack.pop()!;
    const pending = (t.bounds.get(z) ?? 0) - k;
    if (i === piece.length && (!last || (z === t.flat.length && pending === 0))) ends.push(z);
    if (pending > 0) {
      const free = (afterOne && z === x) || (!last && i >= tail && piece.length - i <= pending);
      if (free || t.sep === '') stack.push([i, z, k + 1]);
      if ((free || t.sep === '\n') && piece[i] === '\n') stack.push([i + 1, z, k + 1]);
    } else if (i < piece.length && z < t.flat.length && piece[i] === t.flat[z]) {
      stack.push([i + 1, z + 1, 0]);
    }
  }
  return ends;
}

/** Steps `mergeMatches` takes, at most, for one text (a few hundred milliseconds). */
const MAX_STEPS = 1 << 23;

/**
 * True when a stored string is the file's string, or it with secrets redacted: also inside an inline file
 * (a `data:` URL, bare base64), which the pipeline decodes, redacts and encodes again (review s62d).
 */
export function sameText(file: string, stored: string): boolean {
  if (file === stored) return true;
  if (stored === REDACTED_ARGUMENTS && !isJson(file)) return true;
  const redacted = stored.includes(PLACEHOLDER);
  // JSON the pipeline parsed, redacted and serialised again (tool-call arguments). Without a placeholder
  // only an inline file redacted inside makes them the same: JSON equal as values is a change of the text.
  if (isJson(stored) && isJson(file)) {
    const [f, s] = [JSON.parse(file) as unknown, JSON.parse(stored) as unknown];
    return (redacted || !sameJson(f, s)) && differsAt(f, s, '') === null;
  }
  if (/;base64,/i.test(stored) && inlineUrlsMatch(file, stored, sameText)) return true;
  if (!redacted) return bareBase64Match(file, stored, sameText);
  return placeholdersMatch(stored.split(PLACEHOLDER), file);
}

const REDACTED_ARGUMENTS = '{"redacted":true}';

/** Glob match where each gap between `parts` is any text: leftmost-first is exact for this pattern. */
function placeholdersMatch(parts: string[], text: string): boolean {
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!text.startsWith(first)) return false;
  let pos = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const at = text.indexOf(parts[i]!, pos);
    if (at < 0) return false;
    pos = at + parts[i]!.length;
  }
  return text.length - last.length >= pos && text.endsWith(last);
}

/** A pair of values still to compare, and the keys it hangs under when they may have been redacted. */
type Pending = { file: unknown; stored: unknown; path: string; keys?: [string, string] };

/**
 * Where two JSON values first differ (strings by `sameText`), or null. Depth first, in order, with its own
 * stack: tool-call arguments nest as deep as JSON.parse takes, past V8's stack (review s60d).
 */
export function differsAt(file: unknown, stored: unknown, path: string): string | null {
  const stack: Pending[] = [{ file, stored, path }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    // A key is checked where the recursion checked it: after every pair before its own. Never '' (an
    // empty key at the top): the recursion took that for no difference and went on.
    if (next.keys && !sameKey(...next.keys)) return next.path || '(value)';
    const at = differsHere(next, stack);
    if (at !== null) return at;
  }
  return null;
}

/**
 * A key as the pipeline redacts it: keys that redact to the same text are told apart with a number
 * (`[REDACTED] 2`, `putOwn` in lib/pipeline/save.ts), so a file of such keys re-imports as unchanged.
 */
function sameKey(file: string, stored: string): boolean {
  if (sameText(file, stored)) return true;
  const numbered = /^([^]*) [1-9]\d*$/.exec(stored);
  return !!numbered && numbered[1]!.includes(PLACEHOLDER) && sameText(file, numbered[1]!);
}

/** Where one pair differs by itself; the pairs under it pushed to `stack` (the first on top). */
function differsHere({ file, stored, path }: Pending, stack: Pending[]): string | null {
  if (typeof file === 'string' && typeof stored === 'string')
    return sameText(file, stored) ? null : path || '(value)';
  if (Array.isArray(file) && Array.isArray(stored)) {
    if (file.length !== stored.length)
      return `${path}: ${file.length} items in the file, ${stored.length} stored`;
    for (let i = file.length - 1; i >= 0; i--)
      stack.push({ file: file[i], stored: stored[i], path: `${path}[${i}]` });
    return null;
  }
  if (isObject(file) && isObject(stored)) {
    const fileKeys = Object.keys(file);
    const storedKeys = Object.keys(stored);
    if (fileKeys.length !== storedKeys.length) return `${path || '(object)'}: fields differ`;
    const sameKeys = fileKeys.every((k) => Object.hasOwn(stored, k));
    for (let i = fileKeys.length - 1; i >= 0; i--) {
      // Redaction can rewrite a key (a secret used as a key): then pair the keys by position.
      const fk = fileKeys[i]!;
      const sk = sameKeys ? fk : storedKeys[i]!;
      const at = `${path ? `${path}.` : ''}${fk}`;
      stack.push({
        file: file[fk],
        stored: stored[sk],
        path: at,
        ...(sameKeys ? {} : { keys: [fk, sk] }),
      });
    }
    return null;
  }
  // A number or boolean under a key that names a secret is stored as the placeholder string.
  if (stored === PLACEHOLDER && (typeof file === 'number' || typeof file === 'boolean'))
    return null;
  // `===`, not Object.is: the store keeps a -0 as 0 (JSON), and a re-import of the same file is unchanged.
  return file === stored ? null : path || '(value)';
}

/**
 * Every ref of the file must be stored (deduplicated as the store does, also after redaction), matched on
 * (kind, uri, created_by) as the store deduplicates: a stored ref never changes (a PUT skips a ref it holds),
 * so a `read_only` or `created_at` the file changed is a note (`refNotes`), not a difference that no
 * replace could make (review s62d). Refs stored beyond the file's are no difference: refs are add-only, so
 * no import (not even a replace) could drop them (`storedOnlyRefs` counts them).
 */
function refsDiffer(file: ExternalRef[], stored: ExternalRef[]): string | null {
  return matchRefs(file, stored).missing;
}

/** How many stored refs the file does not hold (kept by a replace: refs are add-only). */
export function storedOnlyRefs(file: OdekSession, stored: Session): number {
  const { matched } = matchRefs(file.external_refs, stored.external_refs);
  return stored.external_refs.filter((s) => !matched.has(s)).length;
}

/** Notes on the file's refs stored with another `read_only` or `created_at`, which no import changes. */
export function refNotes(file: OdekSession, stored: Session): string[] {
  const kept = [...matchRefs(file.external_refs, stored.external_refs).pairs].flatMap(
    ([ref, s]) => {
      const fields = [
        ...(ref.read_only !== s.read_only ? [`read_only ${s.read_only}`] : []),
        ...(sameTime(ref.created_at, s.created_at) ? [] : [`created_at ${s.created_at}`]),
      ];
      return fields.length ? [`ref ${s.kind} ${s.uri} kept as stored (${fields.join(', ')})`] : [];
    },
  );
  if (kept.length === 0) return [];
  const more = kept.length > 3 ? ` and ${kept.length - 3} more` : '';
  return [`${kept.slice(0, 3).join('; ')}${more}: a stored ref does not change`];
}

/** A file ref's time is the stored one's, or absent (the store stamped it). */
function sameTime(file: string, stored: string): boolean {
  return !isTime(file) || Date.parse(file) === Date.parse(stored);
}

/** The file's refs (deduplicated) each matched to a stored ref, or the first one missing. */
function matchRefs(
  file: ExternalRef[],
  stored: ExternalRef[],
): { missing: string | null; matched: Set<ExternalRef>; pairs: Map<ExternalRef, ExternalRef> } {
  const wanted: ExternalRef[] = [];
  for (const r of file)
    if (!wanted.some((w) => w.kind === r.kind && w.uri === r.uri && w.created_by === r.created_by))
      wanted.push(r);
  // The server keeps the first of refs that redact to the same one: a later file ref may match a stored
  // ref an earlier one matched, when the stored one holds a placeholder (its other fields were dropped).
  const matched = new Set<ExternalRef>();
  const pairs = new Map<ExternalRef, ExternalRef>();
  for (const ref of wanted) {
    const same = (s: ExternalRef) => !matched.has(s) && sameRef(ref, s);
    // One that is the same in every field first, where redaction made several the same.
    const first =
      stored.find(
        (s) => same(s) && ref.read_only === s.read_only && sameTime(ref.created_at, s.created_at),
      ) ?? stored.find(same);
    if (first) {
      matched.add(first);
      pairs.set(ref, first);
    } else if (!stored.some((s) => matched.has(s) && redacted(s) && sameRef(ref, s)))
      // Its place, not its uri: a uri may carry a token the server stored redacted (review s67h).
      return { missing: `external_refs[${file.indexOf(ref)}]: not stored`, matched, pairs };
  }
  return { missing: null, matched, pairs };
}

/** A file ref is a stored one, as the store deduplicates (also after redaction). */
function sameRef(ref: ExternalRef, s: ExternalRef): boolean {
  return (
    sameText(ref.kind, s.kind) && sameText(ref.created_by, s.created_by) && sameText(ref.uri, s.uri)
  );
}

function redacted(ref: ExternalRef): boolean {
  return [ref.kind, ref.uri, ref.created_by].some((t) => t.includes(PLACEHOLDER));
}

/**
 * Exact equality of two JSON values, whatever the order of object keys (the server's may differ). With its
 * own stack, as differsAt: tool-call arguments nest as deep as JSON.parse takes, past V8's (review s64d).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = x.length - 1; i >= 0; i--) stack.push([x[i], y[i]]);
      continue;
    }
    if (!isObject(x) || !isObject(y)) return false;
    const keys = Object.keys(x);
    if (keys.length !== Object.keys(y).length || !keys.every((k) => Object.hasOwn(y, k)))
      return false;
    for (const k of keys) stack.push([x[k], y[k]]);
  }
  return true;
}

function isTime(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isJson(s: string): boolean {
  const t = s.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return false;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}
