import { spacedGroups } from '../model/bytes.js';
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
  /**
   * A stored text's: the end of its one line (the pipeline stores a file it redacted unwrapped). A file's:
   * the ends the pipeline may have read it to, longest first (`fileEnds`).
   */
  ends: number[];
  /** A file's: `ends[1]` is `ends[0]` without its last line, read when that line spoils it (`takesLast`). */
  tried?: boolean;
}

/** The `data:` URLs in `s`, each with the ends the pipeline may have read it to when `wrapped` (a file's text). */
function urlsIn(s: string, wrapped: boolean): Url[] {
  const head = new RegExp(HEAD, 'gi');
  const urls: Url[] = [];
  for (let found = head.exec(s); found; found = head.exec(s)) {
    // Its lines, as the pipeline follows them: each from where its base64 starts to where it ends.
    const lines: [number, number][] = [];
    for (let from = head.lastIndex; ;) {
      RUN.lastIndex = from;
      RUN.exec(s);
      lines.push([from, RUN.lastIndex]);
      WRAP.lastIndex = RUN.lastIndex;
      if (!wrapped || !WRAP.exec(s)) break;
      from = WRAP.lastIndex;
    }
    head.lastIndex = lines[lines.length - 1]![1];
    const url = { start: found.index, body: lines[0]![0] };
    urls.push(
      wrapped ? { ...url, ...fileEnds(s, url.start, lines) } : { ...url, ends: [lines[0]![1]] },
    );
  }
  return urls;
}

/**
 * Where the pipeline may have read a file's URL to (lib/pipeline/save.ts `inlineUrls`, `inlineUrl`): its
 * first line, and the lines after it of that line's width (16 to 120, a multiple of 4) with a last one of
 * whole groups; or every line, in a text that is the URL; then the same without the last line taken, when
 * the reading with it does not decode (`tried`). And to the text's end, for a text that is the URL in groups
 * of one width between blanks. Only these: text after the URL read as base64 decodes to a few more bytes,
 * which a placeholder at the end of the stored file stands for (review s62i).
 */
function fileEnds(
  s: string,
  start: number,
  lines: [number, number][],
): Pick<Url, 'ends' | 'tried'> {
  const last = lines[lines.length - 1]![1];
  const whole = start === 0 && !s.slice(last).trim();
  const width = lines[0]![1] - lines[0]![0];
  let taken = 1;
  if (whole) taken = lines.length;
  else if (width >= 16 && width <= 120 && width % 4 === 0)
    for (; taken < lines.length; taken++) {
      const size = lines[taken]![1] - lines[taken]![0];
      if (size !== width && size % 4) break;
      if (size !== width) {
        taken++;
        break;
      }
    }
  const ends = lines
    .slice(Math.max(0, taken - 2), taken)
    .map(([, to]) => to)
    .reverse();
  const spaced =
    start === 0 &&
    !whole &&
    /^[\w+/=%\s-]*$/.test(s.slice(last)) &&
    spacedGroups(s.slice(lines[0]![0]));
  return { ends: spaced ? [...ends, s.length] : ends, tried: taken > 1 };
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

/** A stored file the pipeline redacted inside: its bytes, and the readings of them that show it. */
interface Redacted {
  bytes: string;
  views: typeof VIEWS;
}

/** A stored base64's file when the pipeline redacted inside it (by its bytes, not read), else undefined. */
function redactedFile(b64: string): Redacted | undefined {
  const bytes = bytesOf(b64);
  const views = bytes === undefined ? [] : VIEWS.filter((v) => v.marks(bytes));
  return views.length ? { bytes: bytes!, views } : undefined;
}

/**
 * Whether a file's bytes and a stored file hold the same file, allowing for what the pipeline redacted in
 * it: each reading of the stored bytes that can hold a placeholder compared with that of the file's.
 */
function decodedSame(bytes: string | undefined, stored: Redacted, same: Same): boolean {
  return bytes !== undefined && stored.views.some((v) => same(v.read(bytes), v.read(stored.bytes)));
}

/**
 * Whether a file's base64 and a stored one hold the same file (`decodedSame`), allowing for what the
 * pipeline redacted in it.
 */
function base64Same(file: string, stored: string, same: Same): boolean {
  const redacted = redactedFile(stored);
  return redacted !== undefined && decodedSame(bytesOf(file), redacted, same);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Whether bytes (a binary string) are UTF-8. */
function isUtf8(bin: string): boolean {
  if (!/[^\0-\x7f]/.test(bin)) return true;
  try {
    UTF8.decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the pipeline read a URL with its last line taken (`withLast`) rather than without it (`without`):
 * it does unless that reading is not UTF-8 (nor UTF-16: zeros in its first 8 KiB) and the shorter one is
 * (lib/pipeline/save.ts `inlineUrl`), so a word of whole groups on the line after a URL stays text.
 */
function takesLast(withLast: string | undefined, without: string | undefined): boolean {
  if (withLast === undefined || without === undefined) return true;
  return isUtf8(withLast) || withLast.slice(0, 8192).includes('\0') || !isUtf8(without);
}

/**
 * Whether a file's text is a stored text whose `data:` URLs' files the pipeline redacted: the URLs are
 * paired by position, the text between the redacted ones compared as text (`same`), and each redacted one
 * by its decoded file. The pipeline stores a wrapped URL unwrapped, the text after it as it was: each end
 * the pipeline may have read the file's URL to is tried (`fileEnds`), two or three, so that the work grows
 * with the text's length (review s62i: every wrapped line's end was tried, each with the whole text after).
 */
export function inlineUrlsMatch(file: string, stored: string, same: Same): boolean {
  const fileUrls = urlsIn(file, true);
  const storedUrls = urlsIn(stored, false);
  if (fileUrls.length !== storedUrls.length) return false;
  const redacted = storedUrls.flatMap((u, i) => {
    const inside = redactedFile(stored.slice(u.body, u.ends[0]));
    return inside ? [{ i, inside }] : [];
  });
  if (redacted.length === 0) return false;
  const first = redacted[0]!.i;
  if (!same(file.slice(0, fileUrls[first]!.start), stored.slice(0, storedUrls[first]!.start)))
    return false;
  return redacted.every(({ i, inside }, k) => {
    const [f, s, next] = [fileUrls[i]!, storedUrls[i]!, redacted[k + 1]?.i];
    const fileTo = next === undefined ? file.length : fileUrls[next]!.start;
    const storedTo = next === undefined ? stored.length : storedUrls[next]!.start;
    const after = stored.slice(s.ends[0], storedTo);
    // Each reading decoded once, when the text after it fits: decoding is the dear part.
    const decoded = new Map<number, string | undefined>();
    const bytesTo = (e: number) => {
      if (!decoded.has(e)) decoded.set(e, bytesOf(file.slice(f.body, e)));
      return decoded.get(e);
    };
    // The ends are independent: the next redacted URL starts where it does whichever this one takes.
    return (
      same(file.slice(f.start, f.body), stored.slice(s.start, s.body)) &&
      f.ends.some(
        (e, j) =>
          same(file.slice(e, fileTo), after) &&
          (j > 0 || !f.tried || takesLast(bytesTo(e), bytesTo(f.ends[1]!))) &&
          decodedSame(bytesTo(e), inside, same),
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
  return base64Same(file, stored, same);
}
