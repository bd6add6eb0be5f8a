import { utf8, toBase64 } from '../model/bytes.js';
import { toHex } from '../model/digest.js';
import type { Rule } from './rule.js';

/** What every secret becomes. */
import { PLACEHOLDER } from '../model/session.js';

export { PLACEHOLDER };

export interface Redaction {
  text: string;
  /** Number of secrets replaced. */
  count: number;
}

export interface Redactor {
  /** Redacts one string; returns the same string object (and count 0) when nothing matched. */
  redact(text: string): Redaction;
  /** The same rules plus more known secret values (per request); the automaton is shared. */
  withKnownValues(values: string[]): Redactor;
}

/**
 * Builds a redactor from a rule table.
 *
 * One pass of an Aho-Corasick automaton over the ASCII-lowercased text finds every keyword of every rule
 * (overlaps included: `passw` inside `password` is reported too). Only where a keyword occurs does its
 * rule run, as a sticky regex starting at the keyword; a string without keywords costs one table lookup
 * per character. `knownValues` are secrets known by value (config, per request): they are removed
 * literally and in their JSON-escaped, base64, hex and URL-encoded forms, also where the text escapes them.
 */
export function createRedactor(rules: Rule[], options: { knownValues?: string[] } = {}): Redactor {
  return redactorOf(buildAutomaton(rules), options.knownValues ?? []);
}

function redactorOf(automaton: Automaton, values: string[]): Redactor {
  const known = knownForms(values);
  // Every form at once: where one starts, the longest there (one regex pass is about twice as fast as an
  // indexOf per form). A lookahead, stepped one character on, finds forms that overlap too.
  const formsOf = (list: string[]) =>
    list.length
      ? new RegExp(
          `(?=(${list.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')}))`,
          'g',
        )
      : undefined;
  const forms = formsOf(known);
  // Only forms of base64's characters can run over a line break of wrapped base64 (unwrappedViews).
  const wrapped = known.filter((f) => /^[A-Za-z0-9+/_=-]+$/.test(f));
  const wrappedForms = formsOf(wrapped);
  const breaks = crossings(wrapped);
  return {
    withKnownValues: (more) =>
      more.length === 0
        ? redactorOf(automaton, values)
        : redactorOf(automaton, [...values, ...more]),
    redact(text: string): Redaction {
      const ranges: number[] = [];
      // Known values' forms in `view`, as [start, end) pairs.
      const find = (view: string, found: number[], re = forms) => {
        if (!re) return;
        re.lastIndex = 0;
        for (let m = re.exec(view); m; m = re.exec(view)) {
          found.push(m.index, m.index + m[1]!.length);
          re.lastIndex = m.index + 1;
        }
      };
      automaton.scan(text, ranges);
      find(text, ranges);
      // The text with `\/`, `\u00XX`, `%XX` and HTML's `&quot;` undone (a URL in JSON, a URL inside a URL):
      // what a rule or a known value finds there is redacted where it came from, its escapes included.
      decodedViews(text, (view, at) => {
        const found: number[] = [];
        automaton.scan(view, found);
        find(view, found);
        for (const i of found) ranges.push(at[i]!);
      });
      // Full-width forms as ASCII (`password＝…` from a CJK input method), position for position.
      const wide = fullWidthView(text);
      if (wide !== undefined) {
        automaton.scan(wide, ranges);
        find(wide, ranges);
      }
      // Known values' base64 forms across the line breaks of wrapped base64 (`base64` wraps at 76).
      if (wrappedForms)
        unwrappedViews(text, breaks, (view, at) => {
          const found: number[] = [];
          find(view, found, wrappedForms);
          for (const i of found) ranges.push(at[i]!);
        });
      return ranges.length === 0 ? { text, count: 0 } : apply(text, ranges);
    },
  };
}

// A change to the lists below, to `knownForms` or to the views: bump `WALK` in default.ts (a rescan).

/**
 * Values published in providers' documentation as examples (AWS, Stripe, GitHub, Telegram, jwt.io, the
 * Azure storage emulator): text about them is not a leak, and destroying it makes docs unreadable.
 */
const DOCUMENTED_EXAMPLES = [
  'AKIAIOSFODNN7EXAMPLE',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  '123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11',
  'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
  'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
  'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
  'xoxb-not-a-real-token-this-will-not-work',
];

/**
 * Placeholder shapes inside a would-be secret: `EXAMPLE`, runs of x or *, `...`, `your_…`, `…_here`,
 * `REPLACE_ME`, `insert-…`, `changeme`. Random tokens contain none of these (a run of five x's in a
 * base62 token has odds of about 1 in 10^7 per position).
 */
const PLACEHOLDER_SHAPE = new RegExp(
  String.raw`example|x{5,}|\*{4,}|\.{3}|…|0{12,}|your[_-]|[_-]here$|replace[_-]?me|insert[_-]|changeme|` +
    String.raw`placeholder|not[_-]a[_-]real|redacted`,
  'i',
);

/** True for documented example keys and placeholder-shaped values, checked on every rule's match. */
export function isExampleValue(value: string): boolean {
  if (PLACEHOLDER_SHAPE.test(value)) return true;
  for (const example of DOCUMENTED_EXAMPLES) if (value.includes(example)) return true;
  return false;
}

/** Public identifiers that sit under secret-sounding names (`accessToken: 'pk.eyJ…'`, publishable keys). */
const PUBLIC_ID = /^(?:pk[._](?:live_|test_|eyJ)|pk-lf-|sq0idp-|AC[a-f0-9]{32}$)/;

/** References to a secret kept elsewhere: env vars, templates, secret managers, code expressions. */
const REFERENCE = new RegExp(
  String.raw`^(?:\$\{|\$\(|\$[A-Za-z_]|%[A-Za-z_][A-Za-z0-9_]*%$|%\([A-Za-z_][A-Za-z0-9_]*\)s|\{\{|\{%|<%|#\{|` +
    String.raw`@Microsoft\.KeyVault\(|op:\/\/|vault:|ref\+|arn:aws[a-z-]{0,16}:|` +
    String.raw`!(?:vault|Ref|Sub|GetAtt|ImportValue|Join|FindInMap|Secret|env_var|ENV)\b)`,
);

/** Values that are a word standing in for a secret (`null`, `password`, `todo`, `your_key`). */
const WORD_PLACEHOLDER = new RegExp(
  String.raw`^(null|nil|none|undefined|true|false|yes|no|on|off|empty|string|redacted|secret|` +
    String.raw`password|token|example|test|dummy|placeholder|todo|tbd|your[_-]\w*)$`,
  'i',
);
/** Values that read a secret from somewhere in code (`process.env.X`, `config.key`). */
const CODE_REFERENCE = new RegExp(
  String.raw`^(process\.env|os\.environ|os\.getenv|env\.|ENV\[|System\.getenv|Deno\.env|` +
    String.raw`import\.meta\.env|secrets\.|vars\.|var\.|config\.|settings\.|self\.|this\.|` +
    String.raw`exports\.|module\.exports|getenv\(|get_secret|getSecret|functions?\b)`,
);

/**
 * A value without its surrounding blanks and a quote (plain or escaped, once or twice) at either end,
 * with JSON's escapes of `<`, `>`, `&` read (Go writes `\u003cpassword\u003e`): a stand-in written with
 * escapes, `\"${DB_PASSWORD}\"`, is one as its unescaped form is (until 2026-12-06 it was redacted,
 * review s57f).
 */
function bare(value: string): string {
  const v = value.trim().replace(/^\\{0,3}["'`]|\\{0,3}["'`]$/g, '');
  if (!v.includes('\\u00')) return v;
  return v.replace(/\\u00(3c|3e|26)/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** True for references and placeholders that are not secrets themselves. */
export function isPlaceholder(value: string): boolean {
  return placeholderIn(bare(value));
}

/** isPlaceholder of a value already bare. */
function placeholderIn(v: string): boolean {
  if (v.length === 0) return true;
  if (v.includes(PLACEHOLDER)) return true;
  if (isExampleValue(v) || PUBLIC_ID.test(v) || REFERENCE.test(v)) return true;
  if (WORD_PLACEHOLDER.test(v)) return true;
  if (/^(x+|\*+|\.+|-+|_+|#+|•+|<[^>]*>|\[[^\]]*\]|\([^)]*\))$/i.test(v)) return true;
  if (CODE_REFERENCE.test(v)) return true;
  // Code: a call (`getpass()`, `os.getenv("X")`) or its start cut at a blank (`getpass(`); not a password
  // that merely holds a bracket (`EIO1(_8Xo@01`, `…%m(`).
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\((?:.*\))?$/.test(v)) return true;
  return false;
}

/** Whole references to a secret kept elsewhere, as a value under a secret-sounding name (isStandIn). */
const STAND_IN_REFERENCE = new RegExp(
  String.raw`^(?:\$\{\{[^{}]*\}\}|op://\S+|arn:aws[\w-]*:(?:secretsmanager|ssm):\S+|` +
    String.raw`!(?:Ref|Sub|GetAtt|ImportValue|FindInMap|vault|Secret|env_var|ENV)\s+[\w.:/-]+|` +
    String.raw`@Microsoft\.KeyVault\([^()]*\)|(?:vault:|ref\+)\S+|#\{[^{}]+\}|%\(\w+\)s)$`,
);

/**
 * Whether a value under a name that says secret (`password`, `api_key`) only stands in for one: wholly a
 * reference or a placeholder (`${DB_PASSWORD}`, `$DB_PASSWORD`, `{{ secrets.X }}`, `%PASS%`,
 * `<your-password>`, `***`, `null`, `process.env.X`, `getpass()`), never a value that merely holds such a
 * shape: `$uperS3cretPa55`, `W41t...F0r1tNow`, `xXxXxDragon1987`, `MyExample#Pw2024` are passwords (until
 * 2026-12-06 isPlaceholder's substring shapes kept them: review s52f).
 */
export function isStandIn(value: string): boolean {
  const v = value.trim().replace(/^["'`]|["'`]$/g, '');
  if (v.length === 0 || v === PLACEHOLDER || DOCUMENTED_EXAMPLES.includes(v)) return true;
  if (WORD_PLACEHOLDER.test(v) || PUBLIC_ID.test(v)) return true;
  if (/^(x+|\*+|\.+|-+|_+|#+|•+|<[^<>]*>|\[[^[\]]*\])$/i.test(v)) return true;
  if (
    /^(\$\{[^{}]+\}|\$\([^()]+\)|\$[A-Z_][A-Z0-9_]*|%[A-Za-z_]\w*%|\{\{[^{}]*\}\}|\{%[^{}]*%\})$/.test(
      v,
    )
  )
    return true;
  // Whole references to a secret manager or template (review s52h): `${{ secrets.X }}`, 1Password,
  // AWS Secrets Manager or SSM, CloudFormation, Azure Key Vault, Vault, `#{X}`, `%(x)s`.
  if (STAND_IN_REFERENCE.test(v)) return true;
  // Code that reads it from elsewhere: `process.env.X`, `os.getenv("X")`, `getpass()`.
  if (CODE_REFERENCE.test(v) && /^[\w.$[\]'"()\s-]+$/.test(v)) return true;
  return /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\((?:\s*["'][\w .:/-]*["']\s*)?\)$/.test(v);
}

/** Counts of each UTF-16 unit while `shannonEntropy` runs (all zero between calls), and their order. */
const unitCounts = new Int32Array(0x10000);
const unitsSeen: number[] = [];
/** `p * log2(p)` for p = count / length, per count, for one length (NaN: not yet); the same terms, once. */
let terms = new Float64Array(0);

/** Shannon entropy of `s`, in bits per character. */
export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  // A table, not a Map: this runs on every candidate secret, thousands of times in hostile text.
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const n = unitCounts[c]!;
    if (n === 0) unitsSeen.push(c);
    unitCounts[c] = n + 1;
  }
  let h = 0;
  if (terms.length !== s.length + 1) terms = new Float64Array(s.length + 1).fill(NaN);
  // In the order of first occurrence, as a Map iterates: the same sum, to the last bit.
  for (const c of unitsSeen) {
    const n = unitCounts[c]!;
    let term = terms[n]!;
    if (term !== term) {
      const p = n / s.length;
      term = terms[n] = p * Math.log2(p);
    }
    h -= term;
    unitCounts[c] = 0;
  }
  unitsSeen.length = 0;
  return h;
}

// ---- Aho-Corasick over ASCII, case-insensitive ----

const ALPHABET = 128;
const LOWER = new Uint8Array(ALPHABET).map((_, c) => (c >= 65 && c <= 90 ? c + 32 : c));
const WORD = new Uint8Array(ALPHABET).map((_, c) =>
  /[A-Za-z0-9]/.test(String.fromCharCode(c)) ? 1 : 0,
);

interface Automaton {
  /** Finds rule matches in `text`, pushing [start, end) pairs to `ranges`; returns the number of keyword hits. */
  scan(text: string, ranges: number[]): number;
}

/** The keyword automaton of a rule set: a keyword trie turned into a DFA over character classes. */
function buildAutomaton(rules: Rule[]): Automaton {
  const classes = charClasses(rules);
  const { compiled, children, outputs } = keywordTrie(rules, classes);
  const { table, hasOutput } = transitionTable(children, outputs, classes.width);
  return scanner(table, hasOutput, classes, outputs, compiled);
}

/**
 * A rule as the scan runs it: `indexed` is its pattern with the d flag (a group's position), and `seen` the
 * last value the checks ran on in the scan under way, `ok` their verdict (the same value again, a header on
 * every line of a log, is checked once: the checks depend on the rule and the value alone).
 */
interface Compiled extends Rule {
  indexed?: RegExp;
  /** The keywords in lower case by their first character (nextKeyword). */
  byFirst?: Map<string, { kw: string; word: boolean }[]>;
  seen?: string;
  ok?: boolean;
}

/** Keyword outputs of a trie state: the rule and the keyword's length. */
type Outputs = { rule: number; length: number }[][];

/** Checks and compiles the rules, and builds the trie of their keywords (state 0 is the root). */
function keywordTrie(
  rules: Rule[],
  classes: { of: Uint8Array },
): { compiled: Compiled[]; children: Map<number, number>[]; outputs: Outputs } {
  // Trie of keywords; state 0 is the root.
  const children: Map<number, number>[] = [new Map()];
  const outputs: Outputs = [[]];
  const compiled: Compiled[] = [];
  rules.forEach((rule, ruleIndex) => {
    if (!rule.pattern.sticky) throw new Error(`rule ${rule.id}: pattern needs the y flag`);
    const { source, flags } = rule.pattern;
    const group = rule.group ?? 0;
    // Group positions come from the d flag, which makes every match cost about twice as much (in hostile
    // text matches are not rare): `runRule` finds the group in the match instead, and runs `indexed` only
    // where its value occurs there twice. A group in a lookaround may lie outside the match: groupStart
    // then runs the rule with d alone.
    const indexed = group > 0 ? new RegExp(source, flags.replace('d', '') + 'd') : undefined;
    compiled[ruleIndex] = { ...rule, indexed };
    if (rule.each && !(rule.each.global && rule.each.hasIndices)) {
      throw new Error(`rule ${rule.id}: each needs the g and d flags`);
    }
    for (const keyword of rule.keywords) {
      if (!keyword || keyword !== keyword.toLowerCase() || /[^\x00-\x7f]/.test(keyword)) {
        throw new Error(
          `rule ${rule.id}: keyword ${JSON.stringify(keyword)} must be lowercase ASCII`,
        );
      }
      let state = 0;
      for (const ch of keyword) {
        const c = classes.of[ch.charCodeAt(0)]!;
        let next = children[state]!.get(c);
        if (next === undefined) {
          next = children.length;
          children.push(new Map());
          outputs.push([]);
          children[state]!.set(c, next);
        }
        state = next;
      }
      outputs[state]!.push({ rule: ruleIndex, length: keyword.length });
    }
  });
  return { compiled, children, outputs };
}

/** Breadth-first over the trie: failure links, merged outputs, and the full transition table. */
function transitionTable(
  children: Map<number, number>[],
  outputs: Outputs,
  width: number,
): { table: Uint16Array | Int32Array; hasOutput: Uint8Array } {
  // Breadth-first: failure links, merged outputs, and the full transition table (a DFA).
  const states = children.length;
  // A row per state, a column per character class; 16-bit entries while the states fit. The table
  // is then a fraction of 128 columns of 32 bits, so more of it stays in cache during the scan.
  const table = states <= 0xffff ? new Uint16Array(states * width) : new Int32Array(states * width);
  const fail = new Int32Array(states);
  const queue: number[] = [];
  for (let c = 0; c < width; c++) {
    const next = children[0]!.get(c);
    if (next !== undefined) {
      table[c] = next;
      queue.push(next);
    }
  }
  for (let qi = 0; qi < queue.length; qi++) {
    const state = queue[qi]!;
    outputs[state]!.push(...outputs[fail[state]!]!);
    for (let c = 0; c < width; c++) {
      const next = children[state]!.get(c);
      if (next !== undefined) {
        fail[next] = table[fail[state]! * width + c]!;
        table[state * width + c] = next;
        queue.push(next);
      } else table[state * width + c] = table[fail[state]! * width + c]!;
    }
  }
  const hasOutput = new Uint8Array(states).map((_, s) => (outputs[s]!.length > 0 ? 1 : 0));
  return { table, hasOutput };
}

/** The scan over a transition table, running each keyword's rule where the keyword ends. */
function scanner(
  table: Uint16Array | Int32Array,
  hasOutput: Uint8Array,
  classes: { of: Uint8Array; shift: number },
  outputs: Outputs,
  compiled: Compiled[],
): Automaton {
  // Per rule, the last match of this scan, [from, to): a keyword inside it is not run again (below).
  const from = new Int32Array(compiled.length);
  const to = new Int32Array(compiled.length);
  // Per rule with `requires`, where the next such character is at or after the last keyword (2^31-1: none).
  const next = new Int32Array(compiled.length);
  return {
    scan(text, ranges) {
      // Locals, not closure variables: V8 then optimises this loop the same way every time.
      const T = table;
      const H = hasOutput;
      const C = classes.of;
      const shift = classes.shift;
      let hits = 0;
      let state = 0;
      const n = text.length;
      from.fill(0);
      to.fill(0);
      next.fill(-1);
      for (let i = 0; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c >= ALPHABET) {
          state = 0;
          continue;
        }
        state = T[(state << shift) | C[c]!]!;
        if (H[state] === 0) continue;
        for (const out of outputs[state]!) {
          hits++;
          const r = out.rule;
          const start = i - out.length + 1;
          // Like a global regex, a rule resumes after its last match: a keyword inside that match (a run of
          // `cookie: a=x` or `sk-ant-sk-ant-…`) would rescan the same window, up to 8 KB per keyword.
          if (start >= from[r]! && start < to[r]!) continue;
          const needs = compiled[r]!.requires;
          if (needs) {
            if (next[r]! < start) {
              const k = text.indexOf(needs.char, start);
              next[r] = k < 0 ? 0x7fffffff : k;
            }
            if (next[r]! - start > needs.within) continue;
          }
          const end = runRule(compiled[r]!, text, start, ranges);
          if (end > start) {
            from[r] = start;
            to[r] = end;
          }
        }
      }
      // A value may be a slice of the text: kept, it would keep the whole text alive.
      if (checked.length > 0) {
        for (const rule of checked) rule.seen = undefined;
        checked.length = 0;
      }
      return hits;
    },
  };
}

/**
 * Character classes of the automaton: every (lower-cased) character that occurs in a keyword has a class of
 * its own, all others share class 0. Rows are 64 wide when the classes fit, else 128.
 */
function charClasses(rules: Rule[]): { of: Uint8Array; width: number; shift: number } {
  const used = new Set<number>();
  for (const rule of rules) {
    for (const keyword of rule.keywords) for (const ch of keyword) used.add(ch.charCodeAt(0));
  }
  const ids = new Map([...used].sort((a, b) => a - b).map((c, i) => [c, i + 1]));
  const of = new Uint8Array(ALPHABET).map((_, c) => ids.get(LOWER[c]!) ?? 0);
  const shift = ids.size + 1 <= 64 ? 6 : 7;
  return { of, width: 1 << shift, shift };
}

/**
 * What the rules' patterns did since a test set these to 0: how many times one ran, and how many characters
 * their matches covered (a deterministic measure of the scan's work; wall time is for bench/); how many
 * times the value checks ran (not for a value checked just before), a pattern ran again for its group's
 * position, and how many characters of rejected values were searched for a keyword again.
 */
export const ruleWork = { runs: 0, matched: 0, checks: 0, reruns: 0, rescanned: 0 };

/** Runs `rule` at a keyword that starts at `start`; returns where its match ends (-1: no match). */
function runRule(rule: Compiled, text: string, start: number, ranges: number[]): number {
  const before = start > 0 ? text.charCodeAt(start - 1) : -1;
  if (rule.boundary && before >= 0 && before < ALPHABET && WORD[before] === 1) return -1;
  if (rule.after !== undefined && (before < 0 || !rule.after.includes(text[start - 1]!))) return -1;
  const re = rule.pattern;
  re.lastIndex = start;
  const m = re.exec(text);
  ruleWork.runs++;
  if (!m) return -1;
  ruleWork.matched += m[0].length;
  const end = m.index + m[0].length;
  const group = rule.group ?? 0;
  const secret = m[group];
  if (secret === undefined || secret.length === 0) return end;
  if (rule.each) {
    eachSecret(rule, rule.each, secret, groupStart(rule, text, m, secret), ranges);
    return end;
  }
  // A value the checks reject is resumed after only up to a keyword of the rule that follows a separator
  // inside it: that may start a secret (`password=changeme,redis.password=<key>`: the first value runs on
  // over the second, and until that was seen the second was never read).
  if (!accepted(rule, secret)) return nextKeyword(rule, text, start, end);
  let from = groupStart(rule, text, m, secret);
  const to = from + secret.length;
  if (rule.extendBack) {
    const max = rule.extendBackMax ?? 64;
    let k = 0;
    while (from > 0 && k < max && rule.extendBack.test(text[from - 1]!)) {
      from--;
      k++;
    }
  }
  ranges.push(from, to);
  return end;
}

/**
 * Where the secret, `m[rule.group]`, starts in `text`: where it occurs in the match, when it occurs there
 * once (a group outside lookarounds is inside the match); else from the d flag's indices, the pattern run
 * again at the same place (the same match). A secret outside its match (a group in a lookbehind, as
 * `private-key-block-tail`'s) makes the rule run with the d flag alone from then on (until 2026-12-07 a
 * parse of every pattern's source told which rules those are: 100 B of the R2-only bundle).
 */
function groupStart(rule: Compiled, text: string, m: RegExpExecArray, secret: string): number {
  const group = rule.group ?? 0;
  if (group === 0) return m.index;
  if (m.indices) return m.indices[group]![0];
  const at = m[0].indexOf(secret);
  if (at >= 0 && m[0].indexOf(secret, at + 1) < 0) return m.index + at;
  ruleWork.reruns++;
  const re = rule.indexed!;
  if (at < 0) rule.pattern = re;
  re.lastIndex = m.index;
  return re.exec(text)!.indices![group]![0];
}

/**
 * Characters after which a keyword inside a rejected value may start another secret (`,` in
 * `password=changeme,redis.password=…`); not those that glue a keyword to the one before it in a run of
 * them (`api_key=api_key=`, `x-key:x-key:`, `sk-proj-sk-proj-`), which would be read again at each.
 */
const SEPARATOR = /[\s,;.&|"'`(){}[\]<>_]/;
/** ASCII characters after which a keyword may start another secret: SEPARATOR's, and capitals. */
const STARTS = new Uint8Array(ALPHABET).map(
  (_, c) => +/[A-Z]/.test(String.fromCharCode(c)) || +SEPARATOR.test(String.fromCharCode(c)),
);

/**
 * Where, in `text` between `start` and `end`, the first keyword of `rule` begins that may start another
 * secret: after a separator, or a word's keyword after a capital (`PGPASSWORD=`); else `end`.
 */
function nextKeyword(rule: Compiled, text: string, start: number, end: number): number {
  // Most rejected values hold neither (`signature=x`, `pwd=pwd=…`), nor a character outside ASCII (its
  // lower case may differ in length): no keyword in them starts a secret, and none is searched for.
  let k = start;
  while (k < end && text.charCodeAt(k) < ALPHABET && STARTS[text.charCodeAt(k)] === 0) k++;
  if (k === end) return end;
  ruleWork.rescanned += end - start;
  const low = text.slice(start, end).toLowerCase();
  const byFirst = (rule.byFirst ??= keywordsByFirst(rule.keywords));
  // The first place after a separator (or a word's after a capital) where one of the keywords starts.
  for (let k = 1; k < low.length && start + k < end; k++) {
    const list = byFirst.get(low[k]!);
    if (list === undefined) continue;
    const separated = SEPARATOR.test(low[k - 1]!);
    if (!separated && !CAPITAL.test(text[start + k - 1]!)) continue;
    for (const { kw, word } of list)
      if ((separated || word) && low.startsWith(kw, k)) return start + k;
  }
  return end;
}

const CAPITAL = /[A-Z]/;

/** A rule's keywords in lower case by their first character, each with whether it starts with a letter. */
function keywordsByFirst(keywords: string[]): Map<string, { kw: string; word: boolean }[]> {
  const byFirst = new Map<string, { kw: string; word: boolean }[]>();
  for (const keyword of keywords) {
    const kw = keyword.toLowerCase();
    const list = byFirst.get(kw[0]!) ?? [];
    list.push({ kw, word: /^[a-z]/.test(kw) });
    byFirst.set(kw[0]!, list);
  }
  return byFirst;
}

/** The rules with a value checked in the scan under way (`seen`, forgotten at its end). */
const checked: Compiled[] = [];

/** The value checks every secret passes (`check`), run once for a value checked just before. */
function accepted(rule: Compiled, secret: string): boolean {
  if (secret !== rule.seen) {
    if (rule.seen === undefined) checked.push(rule);
    ruleWork.checks++;
    rule.ok = check(rule, secret);
    rule.seen = secret;
  }
  return rule.ok!;
}

/** The value checks every secret passes: length, entropy, placeholders, documented examples. */
function check(rule: Rule, secret: string): boolean {
  if (rule.minLength !== undefined && secret.length < rule.minLength) return false;
  if (rule.entropy !== undefined && shannonEntropy(secret) < rule.entropy) return false;
  const v = rule.placeholders ? bare(secret) : undefined;
  if (v !== undefined && placeholderIn(v)) return false;
  if (rule.not?.test(secret)) return false;
  if (ENTITY_HEAD.test(secret)) return false; // `&quot` of `pw=&quot;…`: the decoded view finds the value
  // placeholderIn found neither the stand-in nor an example in it: nor would the checks below.
  if (v === secret) return true;
  if (secret === PLACEHOLDER || secret.startsWith(PLACEHOLDER)) return false;
  return !isExampleValue(secret);
}

/**
 * The named character references the decoded views undo (namedEntity), and their codes: each name followed
 * by the character it stands for (one string, not a table of numbers: the R2-only bundle's budget).
 */
const NAMED_CODES: Record<string, number> = Object.fromEntries(
  [
    ...(
      'quot"apos\'amp&lt<gt>equals=colon:semi;sol/bsol\\num#period.comma,lowbar_plus+excl!quest?' +
      'commat@percnt%dollar$ast*lpar(rpar)lsqb[rsqb]lcub{rcub}grave`verbar|tab\t'
    ).matchAll(/([a-z]+)([^a-z])/g),
  ].map(([, name, c]) => [name, c!.charCodeAt(0)]),
);

/** An HTML character reference up to its `;`, where the keyed rules end a value (htmlEntity). */
const ENTITY_HEAD = new RegExp(
  `^&(?:${Object.keys(NAMED_CODES).join('|')}|#[0-9]{1,24}|#x[0-9a-f]{1,24})$`,
  'i',
); // only the names the views decode: `password=&Qwxzrt` is a password (review s60g)

/** Several secrets in one match (the pairs of a `Cookie:` header): each group-1 match of `each` is one. */
function eachSecret(
  rule: Compiled,
  each: RegExp,
  region: string,
  offset: number,
  ranges: number[],
): void {
  each.lastIndex = 0;
  for (let m = each.exec(region); m !== null; m = each.exec(region)) {
    if (m[0].length === 0) each.lastIndex++;
    const secret = m[1];
    if (secret === undefined || !accepted(rule, secret)) continue;
    const at = offset + m.indices![1]![0];
    ranges.push(at, at + secret.length);
  }
}

/**
 * The length of an escape at `i` in `s`, or 0: JSON's escaped slash, and escapes of ASCII characters,
 * percent (`%3A`, `%2f`) and JSON's (`\u0026`): what `/\\\/|(?:%|\\u00)[0-7][0-9a-f]/i` matches there; and HTML's
 * character references to ASCII (htmlEntity). Read character by character: text dense with escapes (`%3A`
 * repeated) decoded at about 4 MB/s through the regex and a replace callback per escape.
 */
function escapeAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 37) return OCTAL(s.charCodeAt(i + 1)) && HEX(s.charCodeAt(i + 2)) ? 3 : 0; // %
  if (c === 38) return htmlEntity(s, i) & 31; // &
  if (c !== 92) return 0; // \
  const d = s.charCodeAt(i + 1);
  if (d === 47) return 2; // /
  const u = (d === 117 || d === 85) && s.charCodeAt(i + 2) === 48 && s.charCodeAt(i + 3) === 48;
  return u && OCTAL(s.charCodeAt(i + 4)) && HEX(s.charCodeAt(i + 5)) ? 6 : 0;
}

/** Whether a text may hold an HTML character reference (decodedViews' quick test; htmlEntity decides). */
const ENTITY_HINT = /&(?:#|[a-z]{2,6};)/i;

/**
 * An HTML character reference to a printable-or-control ASCII character at `i` in `s` (`&quot;`, `&#34;`,
 * `&#x22;`, up to 24 digits, leading zeros included): its code times 32 plus its length, or 0. A page, an
 * XML file or an HTML-escaped log quotes a secret as `password=&quot;…&quot;`; the keyed rules end a value
 * at `&` and `;` (review s59l).
 */
function htmlEntity(s: string, i: number): number {
  const d = s.charCodeAt(i + 1);
  if (d !== 35) return namedEntity(s, i);
  const hex = (s.charCodeAt(i + 2) | 32) === 120; // &#x
  let code = 0;
  let k = i + (hex ? 3 : 2);
  for (const stop = k + 24; k < stop; k++) {
    const c = s.charCodeAt(k);
    if (hex ? !HEX(c) : c < 48 || c > 57) break;
    const low = c | 32;
    code = code * (hex ? 16 : 10) + (low <= 57 ? low - 48 : low - 87);
  }
  if (k === i + (hex ? 3 : 2) || s.charCodeAt(k) !== 59 || code === 0 || code > 127) return 0;
  return (code << 5) | (k + 1 - i);
}

/**
 * The named references to ASCII at `i` (`&quot;`, `&apos;`, `&amp;`, `&lt;`, `&gt;` as HTML and XML encoders
 * write them, and HTML5's names of the punctuation the keyed rules read: `&equals;`, `&colon;`, `&sol;`…),
 * any case, as htmlEntity answers. Compared code by code: text dense with `&quot;` decoded at under 20 MB/s
 * through a table of names.
 */
function namedEntity(s: string, i: number): number {
  let word = 0; // up to six letters past the `&`, lower-cased, 7 bits each (packed)
  for (let k = 1; k <= 7; k++) {
    const c = s.charCodeAt(i + k) | 32;
    if (c === 59 && k > 1) {
      const code = NAMED.get(word);
      return code === undefined ? 0 : (code << 5) | (k + 1);
    }
    if (k === 7 || c < 97 || c > 122) return 0;
    word = word * 128 + c;
  }
  return 0;
}
const packed = (name: string) => [...name].reduce((word, c) => word * 128 + c.charCodeAt(0), 0);
const NAMED = new Map(Object.entries(NAMED_CODES).map(([n, c]) => [packed(n), c]));
const OCTAL = (c: number) => c >= 48 && c <= 55;
const HEX = (c: number) => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 102);

/** The character code an escape of `length` at `i` in `s` stands for (escapeAt). */
function unescaped(s: string, i: number, length: number): number {
  if (s.charCodeAt(i) === 38) return htmlEntity(s, i) >> 5; // &
  if (length === 2) return 47; // /
  const low = s.charCodeAt(i + length - 1) | 32;
  return ((s.charCodeAt(i + length - 2) - 48) << 4) | (low <= 57 ? low - 48 : low - 87);
}

/** `n` character codes as a string, a chunk at a time (fromCharCode takes them as arguments). */
function codesToString(codes: Uint16Array, n: number): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i += 8192)
    parts.push(
      String.fromCharCode.apply(
        null,
        codes.subarray(i, Math.min(n, i + 8192)) as unknown as number[],
      ),
    );
  return parts.join('');
}

/**
 * How far around an escape its views reach, in characters: past the longest keyword-to-value gap a rule
 * allows and the longest token it takes (a JWT, a key); a run of escapes closer than this is one window.
 */
const VIEW_REACH = 4096;

/**
 * Calls `scan` with the text around its escapes with JSON's escaped slashes (`\/`) and escapes of ASCII
 * characters, percent (`%3A`, `%40`, `%20`…), JSON's (`\u0026`, as Go writes `&`, `<`, `>`) and HTML's
 * (`&quot;`, `&#34;`), undone,
 * once per round of up to three (a URL encoded inside a URL inside a URL), and with each decoded position's
 * (and the end's) position in the text; never when the text has none. Only the windows `VIEW_REACH` around
 * escapes are decoded, one at a time, so one escape in a long text costs a few KB, not copies and maps of
 * the whole text.
 */
export function decodedViews(text: string, scan: (view: string, at: Int32Array) => void): void {
  // Most text has none: plain searches tell, several times faster than the regex.
  if (
    text.indexOf('%') < 0 &&
    text.indexOf('\\/') < 0 &&
    text.indexOf('\\u') < 0 &&
    !(text.indexOf('&') >= 0 && ENTITY_HINT.test(text))
  )
    return;
  let start = 0;
  let end = -1; // the window being gathered, [start, end) (a slice clamps the end)
  for (let at = 0; at < text.length; at++) {
    const c = text.charCodeAt(at);
    const length = c === 37 || c === 92 || c === 38 ? escapeAt(text, at) : 0;
    if (length === 0) continue;
    if (at - VIEW_REACH > end) {
      if (end >= 0) windowViews(text.slice(start, end), start, scan);
      start = Math.max(0, at - VIEW_REACH);
    }
    end = at + length + VIEW_REACH;
    at += length - 1;
  }
  if (end >= 0) windowViews(text.slice(start, end), start, scan);
}

/** The views of one window of a text that starts at `offset`: one per round that finds escapes. */
function windowViews(
  from: string,
  offset: number,
  scan: (view: string, at: Int32Array) => void,
): void {
  let was: Int32Array | undefined; // where each position of `from` is in the text (none: offset + i)
  for (let round = 0; round < 3; round++) {
    // Each decoded position's place in the text: an escape's decoded character maps to where it starts.
    const at = new Int32Array(from.length + 1);
    const out = new Uint16Array(from.length); // codes: a string joined per escape was 5x slower
    let n = 0;
    let decoded = false;
    for (let k = 0; k < from.length; n++) {
      const c = from.charCodeAt(k);
      const length = c === 37 || c === 92 || c === 38 ? escapeAt(from, k) : 0;
      at[n] = was ? was[k]! : offset + k;
      out[n] = length === 0 ? c : unescaped(from, k, length);
      k += length || 1;
      decoded ||= length > 0;
    }
    if (!decoded) return;
    at[n] = was ? was[from.length]! : offset + from.length;
    const view = codesToString(out, n);
    scan(view, (was = at.subarray(0, n + 1)));
    from = view;
  }
}

/** A full-width `:`, `=` or Latin letter (fullWidthView). */
const FULL_WIDTH_KEYED = /[\uFF1A\uFF1D\uFF21-\uFF3A\uFF41-\uFF5A]/;

/**
 * The text with full-width ASCII forms (U+FF01 to U+FF5E: `＝`, `ｐａｓｓ`) as ASCII, one code unit for one,
 * so a position in it is the same in the text; undefined unless the text has a full-width `=`, `:` or
 * letter, without which no keyed rule can match there otherwise (review s59l; letters: review s61f). The
 * full-width colon reads as `=` (CJK text puts no blank after it, where a keyed rule's `:` needs one),
 * and CJK characters, kana, Hangul and their punctuation as blanks, so a value ends where the sentence
 * goes on (`PASSWORD＝Xk9…、次は`).
 */
export function fullWidthView(text: string): string | undefined {
  if (!FULL_WIDTH_KEYED.test(text)) return undefined;
  return text.replace(
    /[\u3000-\u30FF\u3400-\u9FFF\uAC00-\uD7AF\uFF01-\uFF5E\uFF5F-\uFFEF]/g,
    (c) => {
      const code = c.charCodeAt(0);
      if (code === 0xff1a) return '=';
      return code >= 0xff01 && code <= 0xff5e ? String.fromCharCode(code - 0xfee0) : ' ';
    },
  );
}

/** A line's base64 (either alphabet, padded or not). */
const BASE64_RUN = /[A-Za-z0-9+/_-]*={0,2}/y;

/** Whether `text` from `start` to `end` is base64 (BASE64_RUN). */
function base64Between(text: string, start: number, end: number): boolean {
  BASE64_RUN.lastIndex = start;
  BASE64_RUN.exec(text);
  return BASE64_RUN.lastIndex === end;
}

/**
 * Calls `scan` with each run of wrapped base64 in `text` with its line breaks taken out, and each view
 * position's (and the end's) position in the text: two or more whole lines (after their indentation) of
 * one width (60 to 120, a multiple of 4: `base64` writes 76, PEM and `openssl` 64) and a last one no
 * longer, as inlineUrl reads a `data:` URL's lines; line breaks real or escaped in JSON text. A known
 * value's base64 that runs over a line break is found there (until 2026-12-06 it was kept, review s57d).
 * One pass over the lines, most of them told by their length alone; nothing is built without such runs.
 */
function unwrappedViews(
  text: string,
  breaks: Crossings,
  scan: (view: string, at: Int32Array) => void,
): void {
  let nl = text.indexOf('\n');
  let esc = text.indexOf('\\n');
  if (text.length < 128 || (nl < 0 && esc < 0)) return;
  let lines: number[] = []; // [start, end) of the lines of the run being gathered
  let width = 0;
  const flush = () => {
    if (lines.length >= 4) unwrapped(text, lines, breaks, scan);
    lines = [];
  };
  for (let from = 0; from >= 0;) {
    if (nl >= 0 && nl < from) nl = text.indexOf('\n', from);
    if (esc >= 0 && esc < from) esc = text.indexOf('\\n', from);
    const real = nl >= 0 && (esc < 0 || nl < esc);
    const at = real ? nl : esc < 0 ? text.length : esc; // the line break
    const cr = real ? +(text[at - 1] === '\r') : 2 * +(at >= 2 && text.startsWith('\\r', at - 2));
    const end = Math.max(from, at - cr);
    if (!lines.length && end - from < 60) {
      from = at === text.length ? -1 : at + (real ? 1 : 2); // too short to start a run: the common case
      continue;
    }
    let start = from;
    while (start < end && (text[start] === ' ' || text[start] === '\t')) start++;
    const n = end - start;
    const first = n >= 60 && n <= 120 && n % 4 === 0;
    if ((lines.length ? n > 0 && n <= width : first) && base64Between(text, start, end)) {
      if (!lines.length) width = n;
      lines.push(start, end);
      if (n < width) flush();
    } else {
      flush();
      if (first && base64Between(text, start, end)) lines.push(start, end);
      width = n;
    }
    from = at === text.length ? -1 : at + (real ? 1 : 2);
  }
  flush();
}

/**
 * What a form can look like at a line break it runs over (`unwrappedViews`): `reach`, one less than the
 * longest form; the 4 characters any form can end a line with (`tails`) or start the next one with
 * (`heads`). A form of 8 or more characters across a break has one or the other there.
 */
interface Crossings {
  reach: number;
  heads: Set<number>;
  tails: Set<number>;
}

/** The 4 characters of `s` from `at` as one number (they are ASCII: base64's), without a copy. */
const four = (s: string, at: number) =>
  ((s.charCodeAt(at) << 21) | (s.charCodeAt(at + 1) << 14) | (s.charCodeAt(at + 2) << 7)) +
  s.charCodeAt(at + 3);

function crossings(forms: string[]): Crossings {
  const out: Crossings = { reach: 0, heads: new Set(), tails: new Set() };
  for (const f of forms) {
    out.reach = Math.max(out.reach, f.length - 1);
    for (let k = 1; k + 4 <= f.length; k++) out.heads.add(four(f, k));
    for (let k = 4; k < f.length; k++) out.tails.add(four(f, k - 4));
  }
  return out;
}

/**
 * The views of one run of lines (`unwrappedViews`): at each line break a form can run over (`Crossings`),
 * the lines' text joined `reach` either side of it, and where each view position (and the end) was. Only
 * there: until 2026-12-06 the whole run was copied and searched again, and wrapped base64 with known values
 * redacted two to four times slower (review s57f).
 */
function unwrapped(
  text: string,
  lines: number[],
  breaks: Crossings,
  scan: (view: string, at: Int32Array) => void,
): void {
  for (let j = 2; j < lines.length; j += 2) {
    const end = lines[j - 1]!;
    const start = lines[j]!;
    const crossed =
      (end - lines[j - 2]! >= 4 && breaks.tails.has(four(text, end - 4))) ||
      (lines[j + 1]! - start >= 4 && breaks.heads.has(four(text, start)));
    if (crossed) windowAt(text, lines, j, breaks.reach, scan);
  }
}

/** The view `reach` either side of the line break before line `j / 2` of `lines` (`unwrapped`). */
function windowAt(
  text: string,
  lines: number[],
  j: number,
  reach: number,
  scan: (view: string, at: Int32Array) => void,
): void {
  const pieces: number[] = []; // [start, end) in the text, in order
  for (let i = j - 2, left = reach; i >= 0 && left > 0; i -= 2) {
    const a = Math.max(lines[i]!, lines[i + 1]! - left);
    pieces.unshift(a, lines[i + 1]!);
    left -= lines[i + 1]! - a;
  }
  for (let i = j, left = reach; i < lines.length && left > 0; i += 2) {
    const b = Math.min(lines[i + 1]!, lines[i]! + left);
    pieces.push(lines[i]!, b);
    left -= b - lines[i]!;
  }
  const at: number[] = [];
  let view = '';
  for (let i = 0; i < pieces.length; i += 2) {
    view += text.slice(pieces[i]!, pieces[i + 1]!);
    for (let k = pieces[i]!; k < pieces[i + 1]!; k++) at.push(k);
  }
  at.push(pieces[pieces.length - 1]!);
  scan(view, Int32Array.from(at));
}

/** Replaces the [start, end) ranges, merged where they overlap or touch, with the placeholder. */
/** [start, end) pairs sorted by their start. */
function sortedPairs(ranges: number[]): number[] {
  const n = ranges.length / 2;
  const pairs = new Array<number>(ranges.length);
  if (n >= PAIR_SLOTS || ranges.some((at) => at >= 2 ** 53 / PAIR_SLOTS)) {
    const order = [...Array(n).keys()].sort((a, b) => ranges[2 * a]! - ranges[2 * b]!);
    order.forEach(
      (k, j) => ((pairs[2 * j] = ranges[2 * k]!), (pairs[2 * j + 1] = ranges[2 * k + 1]!)),
    );
    return pairs;
  }
  // Each pair's start and index in one number, sorted natively: a comparator called per comparison took
  // most of the time of text dense with secrets (35,000 of them in 1 MB).
  const keys = new Float64Array(n);
  for (let k = 0; k < n; k++) keys[k] = ranges[2 * k]! * PAIR_SLOTS + k;
  keys.sort();
  for (let j = 0; j < n; j++) {
    const k = keys[j]! % PAIR_SLOTS;
    pairs[2 * j] = ranges[2 * k]!;
    pairs[2 * j + 1] = ranges[2 * k + 1]!;
  }
  return pairs;
}
const PAIR_SLOTS = 2 ** 24;

function apply(text: string, ranges: number[]): Redaction {
  // The scan finds them mostly in order of their start (not always: keywords of several lengths, the
  // decoded views, `extendBack`): sorted, an index per pair, only when out of order.
  let pairs = ranges;
  for (let i = 2; i < ranges.length; i += 2) {
    if (ranges[i]! < ranges[i - 2]!) {
      pairs = sortedPairs(ranges);
      break;
    }
  }
  const mark = PLACEHOLDER;
  let out = '';
  let at = 0;
  let count = 0;
  for (let i = 0; i < pairs.length;) {
    const from = pairs[i]!;
    let to = pairs[i + 1]!;
    for (i += 2; i < pairs.length && pairs[i]! <= to; i += 2) to = Math.max(to, pairs[i + 1]!);
    out += text.slice(at, from) + mark;
    at = to;
    count++;
  }
  return { text: out + text.slice(at), count };
}

/**
 * The shortest known value redacted: shorter ones would destroy ordinary text. `Satchel-Secrets` (400) and
 * `SATCHEL_REDACT_VALUES` (refused at start) reject them; others (the configuration's own) are skipped.
 */
export const MIN_KNOWN_VALUE = 6;

/**
 * The literal, form-encoded (`+` for a space), JSON-escaped, base64 (standard and URL-safe, each
 * alignment), hex and URL-encoded forms of known secrets. The search also runs over the text's views with
 * `\/`, `\u00XX`, `%XX` and HTML's `&#34;` undone (`decodedViews`), so a form escaped there is found too.
 */
function knownForms(values: string[]): string[] {
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_KNOWN_VALUE) continue;
    forms.add(value);
    forms.add(value.replaceAll(' ', '+')); // form encoding (a query string, a POST body)
    const bytes = utf8(value);
    const hex = toHex(bytes);
    forms.add(hex);
    forms.add(hex.toUpperCase());
    const encoded = encodeURIComponent(value);
    if (encoded !== value) forms.add(encoded);
    // A value with `"` or `\` inside JSON text (a tool's output), and inside JSON in a JSON string; with
    // every character outside ASCII as `\uXXXX` too, as Python's json.dumps, `jq -a` and PHP write it
    // (either case of hex digits; until 2026-12-06 such a value was kept, review s57d).
    const escaped = JSON.stringify(value).slice(1, -1);
    const unit = (c: string) => c.charCodeAt(0).toString(16).padStart(4, '0');
    const ascii = escaped.replace(/[^\0-\x7f]/g, (c) => '\\u' + unit(c));
    const upper = escaped.replace(/[^\0-\x7f]/g, (c) => '\\u' + unit(c).toUpperCase());
    for (const form of new Set([escaped, ascii, upper]))
      if (form !== value) {
        forms.add(form);
        forms.add(JSON.stringify(form).slice(1, -1));
      }
    // Inside a longer base64 text the value can start at any of three byte alignments.
    for (let pad = 0; pad < 3; pad++) {
      const b64 = toBase64(new Uint8Array([...new Uint8Array(pad), ...bytes]));
      // Drop characters that mix in the padding bytes, and the tail that depends on what follows.
      const head = Math.ceil((pad * 8) / 6);
      const tail = Math.floor(((pad + bytes.length) * 8) / 6);
      const core = b64.slice(head, tail);
      if (core.length >= 8) {
        forms.add(core);
        forms.add(core.replaceAll('+', '-').replaceAll('/', '_'));
      }
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}
