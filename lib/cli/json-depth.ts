/**
 * How deep JSON nests, without recursion: JSON.parse takes any depth, but JSON.stringify (the client's, of
 * a request body) recurses and throws RangeError past V8's stack (review s60d). Depth as the server counts
 * it (lib/http/body.ts `unsafeJson`): the outermost array or object is level 1.
 */

/** True when JSON text has arrays or objects nested more than `limit` levels deep (strings skipped). */
export function textNestedPast(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote, an escaped character skipped whole.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++)
        if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Where a parsed JSON value first nests more than `limit` levels deep, named by its first three steps
 * (`messages[0].extra`: enough to find it, short however deep it goes), or null when it does not.
 */
export function valueNestedPast(value: unknown, limit: number): string | null {
  const stack: [unknown, number, string][] = [[value, 1, '']];
  while (stack.length > 0) {
    const [v, depth, path] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return path || '(root)';
    const entries: [string, unknown][] = Array.isArray(v)
      ? v.map((child, i) => [`[${i}]`, child])
      : Object.entries(v).map(([k, child]) => [path ? `.${k}` : k, child]);
    for (const [step, child] of entries.reverse())
      stack.push([child, depth + 1, depth <= 3 ? path + step : path]);
  }
  return null;
}
