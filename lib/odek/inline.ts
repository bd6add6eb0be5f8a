import { PLACEHOLDER } from '../model/session.js';

/**
 * Inline files as the save pipeline stores them once it redacted inside one: a `data:…;base64,` URL in
 * text, or bare base64 in a field such as `file_data` (lib/pipeline/save.ts `inlineUrls`, `inlineText`).
 * The pipeline decodes the file, redacts its text and encodes it again, unwrapped, so the stored string
 * holds no literal placeholder: an import compares the decoded texts instead (review s62d).
 */

/** How the import compares two texts (`sameText`), passed in so that this module does not import it. */
type Same = (file: string, stored: string) => boolean;

/** The start of a URL's base64, its base64 and its wrapped lines, as the pipeline finds them (`inlineUrls`). */
const HEAD = String.raw`data:(?:[^,:]|(?<!data):(?=[\\/])){0,4096};base64,`;
const RUN = /[\w+/=%-]*/y;
const LINE_BREAK = String.raw`(?:(?:\\r)?\\n|\r?\n|\r)`;
const WRAP = new RegExp(LINE_BREAK + String.raw`[ \t]*(?!data:)(?=[\w+/=%-])`, 'iy');
const BREAKS = new RegExp(LINE_BREAK + String.raw`[ \t]*`, 'g');

/** A `data:` URL in a text: where it starts, where its base64 starts, and where it may end. */
interface Url {
  start: number;
  body: number;
  /** After its first line, after each wrapped line after it (a file's); one end for a stored text. */
  ends: number[];
}

/** The `data:` URLs in `s`, each with the ends its wrapped lines give when `wrapped` (a file's text). */
function urlsIn(s: string, wrapped: boolean): Url[] {
  const head = new RegExp(HEAD, 'gi');
  const urls: Url[] = [];
  for (let found = head.exec(s); found; found = head.exec(s)) {
    const url: Url = { start: found.index, body: head.lastIndex, ends: [] };
    for (let end = url.body; ;) {
      RUN.lastIndex = end;
      RUN.exec(s);
      url.ends.push((end = RUN.lastIndex));
      WRAP.lastIndex = end;
      if (!wrapped || !WRAP.exec(s)) break;
      end = WRAP.lastIndex;
    }
    head.lastIndex = url.ends[url.ends.length - 1]!;
    // A URL that is the whole text may run to its end (base64 in groups with blanks between).
    if (wrapped && url.start === 0) url.ends.push(s.length);
    urls.push(url);
  }
  return urls;
}

/** Base64 (either alphabet, percent-encoded, wrapped) as its bytes in a binary string; undefined if it is not. */
function bytesOf(b64: string): string | undefined {
  const plain = b64
    .replace(BREAKS, '')
    .replace(/%2b/gi, '+')
    .replace(/%2f/gi, '/')
    .replace(/%3d/gi, '=')
    .replace(/-/g, '+')
    .replace(/_/g, '/');
  try {
    return atob(plain);
  } catch {
    return undefined;
  }
}

/** Bytes read as UTF-16 (a last odd byte kept as it is), as the pipeline reads a UTF-16 file. */
function wide(bin: string, bigEndian: boolean): string {
  const units: string[] = [];
  for (let i = 0; i + 1 < bin.length; i += 2) {
    const [a, b] = [bin.charCodeAt(i), bin.charCodeAt(i + 1)];
    units.push(String.fromCharCode(bigEndian ? (a << 8) | b : (b << 8) | a));
  }
  return units.join('') + bin.slice(bin.length & ~1);
}

/**
 * The ways to read a file's bytes as text, each with how the placeholder looks in those bytes: as bytes
 * (Latin-1, which keeps UTF-8's ASCII as it is, and where a file inside the file shows), and as UTF-16
 * either way, the encodings the pipeline writes a redacted file back in.
 */
const VIEWS: { read: (bin: string) => string; marks: (bin: string) => boolean }[] = [
  { read: (b) => b, marks: (b) => b.includes(PLACEHOLDER) || /;base64,/i.test(b) },
  { read: (b) => wide(b, false), marks: (b) => b.includes(PLACEHOLDER.replace(/./g, '$&\0')) },
  { read: (b) => wide(b, true), marks: (b) => b.includes(PLACEHOLDER.replace(/./g, '\0$&')) },
];

/**
 * Whether a file's base64 and a stored one hold the same file, allowing for what the pipeline redacted in
 * it: each reading of the stored bytes that can hold a placeholder compared with that of the file's.
 */
function decodedSame(file: string, stored: string, same: Same): boolean {
  const storedBytes = bytesOf(stored);
  const views = storedBytes === undefined ? [] : VIEWS.filter((v) => v.marks(storedBytes));
  const fileBytes = views.length ? bytesOf(file) : undefined;
  if (storedBytes === undefined || fileBytes === undefined) return false;
  return views.some((v) => same(v.read(fileBytes), v.read(storedBytes)));
}

/** Whether a stored URL's base64 holds a file the pipeline redacted inside (by its bytes, not read). */
function redactedInside(b64: string): boolean {
  const bytes = bytesOf(b64);
  return bytes !== undefined && VIEWS.some((v) => v.marks(bytes));
}

/**
 * Whether a file's text is a stored text whose `data:` URLs' files the pipeline redacted: the URLs are
 * paired by position, the text between the redacted ones compared as text (`same`), and each redacted one
 * by its decoded file. The pipeline stores a wrapped URL unwrapped, the text after it as it was: each end
 * the file's lines give is tried.
 */
export function inlineUrlsMatch(file: string, stored: string, same: Same): boolean {
  const fileUrls = urlsIn(file, true);
  const storedUrls = urlsIn(stored, false);
  if (fileUrls.length !== storedUrls.length) return false;
  const redacted = storedUrls.flatMap((u, i) =>
    redactedInside(stored.slice(u.body, u.ends[0])) ? [i] : [],
  );
  if (redacted.length === 0) return false;
  const first = redacted[0]!;
  if (!same(file.slice(0, fileUrls[first]!.start), stored.slice(0, storedUrls[first]!.start)))
    return false;
  return redacted.every((i, k) => {
    const [f, s, next] = [fileUrls[i]!, storedUrls[i]!, redacted[k + 1]];
    const fileTo = next === undefined ? file.length : fileUrls[next]!.start;
    const storedTo = next === undefined ? stored.length : storedUrls[next]!.start;
    const end = s.ends[0]!;
    const b64 = stored.slice(s.body, end);
    // The ends are independent: the next redacted URL starts where it does whichever this one takes.
    return (
      same(file.slice(f.start, f.body), stored.slice(s.start, s.body)) &&
      // The text after it first: it fits one end or two, and decoding is the dear part.
      f.ends.some(
        (e) =>
          same(file.slice(e, fileTo), stored.slice(end, storedTo)) &&
          decodedSame(file.slice(f.body, e), b64, same),
      )
    );
  });
}

/**
 * Whether a stored string that is bare base64 (a field such as `file_data`) is the file's base64 with the
 * file redacted inside; stored unwrapped, in either alphabet.
 */
export function bareBase64Match(file: string, stored: string, same: Same): boolean {
  if (stored.length < 16 || !/^(?:[A-Za-z0-9+/]+={0,2}|[\w-]+)$/.test(stored)) return false;
  return decodedSame(file, stored, same);
}
