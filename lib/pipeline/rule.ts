/**
 * The shape of one secret-detection rule. Rules are data (lib/pipeline/rules.ts); the engine
 * (lib/pipeline/redact.ts) finds every rule's keywords in one pass and runs a rule's pattern only at
 * the places where one of its keywords occurs, starting at that keyword.
 */
export interface Rule {
  /** Stable id, e.g. `github-pat`; appears in tests and benchmark output, never in stored data. */
  id: string;
  /**
   * Lowercase ASCII literals (matched case-insensitively). The rule runs only where one occurs: its
   * pattern is executed with `lastIndex` set to the keyword's first character. Like a global regex, a rule
   * resumes after its last match in a text: a keyword inside that match does not run the rule again.
   */
  keywords: string[];
  /** Must carry the `y` (sticky) flag, plus `i` where case does not matter. Matches from the keyword on. */
  pattern: RegExp;
  /** Capture group holding the secret to redact; 0 (default) redacts the whole match. */
  group?: number;
  /** Skip when the character just before the keyword is a letter or digit (e.g. `task` for `sk`). */
  boundary?: boolean;
  /** Minimum Shannon entropy, in bits per character, of the secret. */
  entropy?: number;
  /** Minimum length of the secret. */
  minLength?: number;
  /** Values of this shape are not secrets for this rule (e.g. namespaced ids like `user:42:profile`). */
  not?: RegExp;
  /** Treat placeholders and references (`${VAR}`, `process.env.X`, `<your-key>`, `xxxx`, `null`…) as non-secrets. */
  placeholders?: boolean;
  /**
   * Secrets that begin before their keyword (a Telegram bot id before `:AA…`): extend the redacted range
   * backwards over characters of this class (a one-character regex, e.g. /[0-9]/), at most `extendBackMax`.
   */
  extendBack?: RegExp;
  extendBackMax?: number;
  /**
   * A character every match holds within `within` characters of the keyword's start (`@` in
   * `scheme://user:password@host`): where the next one is farther, the pattern is not run. Keeps a text
   * of keywords without it (`://://://…`) linear: the pattern's backtracking never starts.
   */
  requires?: { char: string; within: number };
  /** The character before the keyword must be one of these (e.g. `?&` for URL query parameters). */
  after?: string;
  /**
   * Several secrets in one match (the values of a `Cookie:` header): a global regex with the `d` flag, run
   * over the matched group; each of its group-1 matches that passes the value checks is one secret.
   */
  each?: RegExp;
}
