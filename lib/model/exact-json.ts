/**
 * JSON text without the whitespace between its tokens, when parsing it and serialising the value again
 * gives exactly that; undefined when the text is not JSON, or when parsing would change what it says (a
 * repeated key keeps its last value, 12345678901234567891 becomes 12345678901234567000, 1e400 null, 1.50
 * 1.5, "\u0041" A, integer-like keys move first). So a reformatted form (one line, or indented) is shown
 * only when it says exactly what is stored.
 *
 * The session browser keeps the same rule in its own copy (prettyArgs in lib/ui/client.ts: its served
 * script can import nothing); test/cli/review-s59c-show-arguments.test.ts checks that the two agree.
 */
export function exactJson(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // The text without the whitespace between tokens (strings kept whole).
  const bare = text.replace(/"(?:[^"\\]|\\[\s\S])*"|[ \t\n\r]+/g, (t) => (t[0] === '"' ? t : ''));
  try {
    return bare === JSON.stringify(value) ? bare : undefined;
  } catch {
    return undefined; // nested deeper than JSON.stringify can write (it recurses): shown as stored
  }
}
