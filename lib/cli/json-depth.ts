/**
 * How deep a parsed value nests, without recursion: JSON.stringify (the client's, of a request body)
 * recurses and throws RangeError past V8's stack (review s60d). Depth as the server counts it
 * (lib/model/json-depth.ts, for the text): the outermost array or object is level 1.
 */

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
