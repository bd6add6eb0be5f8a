/**
 * How deep JSON text nests, read before it is parsed: JSON.parse takes any depth, and builds every level
 * first (24 MiB of brackets took 27 s of CPU and ran a 512 MB heap out of memory before the 400, review
 * s68c), and JSON.stringify recurses and throws RangeError past V8's stack (review s60d). Depth as the
 * server counts it: the outermost array or object is level 1.
 */

/** True when JSON text has arrays or objects nested more than `limit` levels deep (strings skipped). */
export function textNestedPast(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote, found natively (most of a session's bytes are strings), one after
      // an odd run of backslashes being escaped.
      for (let b; ;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return false;
        for (b = i; text.charCodeAt(b - 1) === 0x5c;) b--;
        if ((i - b) % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
