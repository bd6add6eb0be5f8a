import type { Rule } from './rule.js';

/**
 * The secret-detection rules. Every pattern is sticky (`y`) and matches starting AT one of the rule's
 * keywords (see rule.ts); keywords are lowercase ASCII. Repetitions are bounded so that no pattern can
 * backtrack catastrophically, and context-free rules use a distinctive prefix plus a length (and where it
 * helps an entropy) floor, so that UUIDs, git SHAs, integrity hashes, public keys and prose stay intact.
 *
 * Order does not matter: the engine merges overlapping ranges from several rules.
 */

/** Regex sources are written raw (backslashes as they are); one short name for the tag. */
const raw = String.raw;

/**
 * Words a PostgreSQL role's `PASSWORD` follows (`WITH`, `LOGIN`, `ENCRYPTED`, other options of CREATE and
 * ALTER ROLE): `CREATE ROLE app WITH LOGIN SUPERUSER PASSWORD 'pw'`.
 */
const SQL_ROLE_WORDS =
  'with|(?:no)?(?:login|superuser|createdb|createrole|inherit|replication|bypassrls)|(?:un)?encrypted';
/** A SQL string literal, in single or double quotes, up to 256 characters: the quote, then the value. */
const SQL_LITERAL = raw`(['"])(?![$%{<])((?:(?!\1)[^\n]){1,256})\1`;

// ---------------------------------------------------------------------------------------------------------
// Generic `key = value` assignments (.env, shell, YAML, JSON, Python/JS/Go/Ruby/PHP code)
// ---------------------------------------------------------------------------------------------------------

/** Where an unquoted value ends: whitespace, quotes, separators, closing brackets, a backslash, the end. */
const VALUE_END = raw`(?=[\s"'\x60,;&)\]}>\\]|$)`;
/**
 * A value run longer than a rule takes: `max + 1` characters of `chars`, none of which can end the value.
 * Placed before a rule's value, it matches where the value could not (with no secret captured), so that
 * the engine resumes after it: a keyword repeated inside one long run (`pwd=pwd=…`, `apikey:apikey:…`)
 * is then examined once per `max` characters, not once per keyword with the whole window scanned again.
 */
const tooLong = (chars: string, max: number) => raw`${chars}{${max + 1}}`;
/** No character that ends a value (`VALUE_END`) or a quoted value: a run of these is one value or none. */
const NON_END = raw`[^\s"'\x60,;&)\]}>\\]`;
/** Characters of an unquoted value (no brackets: `f(x)`, `${VAR}`, `<your-key>`, `[REDACTED]` never match). */
const UNQUOTED_CHAR = raw`[^\s"'\x60,;&()<>\[\]{}\\]`;
/** An identifier without digits (`request_token`, `accessToken`, `$TOKEN`). */
const IDENT = raw`[A-Za-z_$]{1,256}`;

/**
 * Values that are references or placeholders, not secrets: `${VAR}`, `$(cmd)`, `{{ x }}`, `%VAR%`,
 * `<your-key>`, `***`, `xxxx`, `your-…`, `$VAR` / `:param` / `@var`, null-ish words and type names. The
 * engine's isPlaceholder() checks too (`placeholders: true`); the common cases are repeated here so that
 * the patterns are safe on their own.
 */
const NOT_PLACEHOLDER =
  raw`(?!\[REDACTED\]|\$\{|\$\(|\{\{|%[A-Za-z_][A-Za-z0-9_]*%|<[^>\n]{0,64}>|\*{3}|x{4}|your[_-]` +
  raw`|[$:@][A-Za-z_][A-Za-z0-9_]{0,64}${VALUE_END}` +
  raw`|(?:null|nil|none|true|false|undefined|string|number|boolean|bool|str|bytes|int|` +
  raw`any|unknown|object|optional|secretstr)${VALUE_END})`;

/**
 * Code between two string literals, not a value: another quote and a concatenation (`'" + new_pw + "'`,
 * PHP's `" . $s . "`, SQL's `' || x || '`, VB's `" & x & "`). Until 2026-12-06 a value after `password = '`
 * could run over it to the next `'` (review s57f).
 */
const CONCATENATION = raw`["'\x60][ \t]{0,16}(?:\+|\|\||\.{1,2}[ \t$]|&[ \t])`;

/** A value quoted with `q` (a plain quote, not after a backslash), to the same quote: see QUOTED_VALUE. */
function quotedWith(q: string): string {
  const edge = raw`(?:[^\s${q}\\]|\\[^\n])`; // the first and last character: no blank
  return (
    raw`(?<=(?<!\\)${q})${NOT_PLACEHOLDER}(?![,+;()])(?!${CONCATENATION})` +
    raw`${edge}(?:(?:[^${q}\n\\]|\\[^\n]){0,510}${edge})?(?=${q})`
  );
}

/**
 * An escape of JSON inside a JSON string (`\\\"`, `\\\\`, `\\u00e4`: a quote, a backslash, a letter
 * outside ASCII one level down), and a value's first or last character there (review s57f).
 */
const ESCAPED_TWICE = raw`\\\\(?:\\[^\n]|u[0-9A-Fa-f]{4})`;
const ESCAPED_EDGE = raw`(?:[^\s"'\x60\\]|${ESCAPED_TWICE})`;

/**
 * A quoted value: no leading/trailing blank, no newline; the closing quote must follow. After a plain quote
 * the value runs to the same quote, and may hold the other two and escapes (`\"`, `\\`, `\u00e4`: a JSON,
 * Python or shell value `Lm2"Zx9`, `Zx9\q`, `pässwort` as json.dumps writes it; until 2026-12-06 a value
 * with any of them was kept whole, review s57d). After an escaped quote (JSON inside a JSON string) the
 * value holds no plain quote or backslash, but escapes one level down (ESCAPED_TWICE; until 2026-12-06 a
 * value with any was kept whole, review s57f).
 */
const QUOTED_VALUE =
  raw`(?:${quotedWith('"')}|${quotedWith("'")}|${quotedWith('\x60')}|` +
  raw`(?<=\\["'\x60])${NOT_PLACEHOLDER}(?![,+;()])` +
  raw`${ESCAPED_EDGE}(?:(?:[^"'\x60\n\\]|${ESCAPED_TWICE}){0,510}${ESCAPED_EDGE})?(?=\\?["'\x60]))`;

/**
 * An unquoted value. Code references are skipped: dotted names without digits (`process.env.API_KEY`,
 * `self.token`), and plain identifiers without digits after a spaced `=` (`token = request_token`) or
 * followed by `,` `;` `)` `}` `]` (`{ token: accessToken }`, `f(token=token)`). So is prose: a word of
 * letters followed by more words (`the secret: always test`).
 */
function unquotedValue(run: string, closers = raw`[,;)}\]]`): string {
  return (
    raw`(?<![\\"'\x60])${NOT_PLACEHOLDER}` +
    raw`(?!${IDENT}(?:\.${IDENT}){1,16}${VALUE_END})` +
    raw`(?:(?<=[ \t](?::=|=>|=)[ \t]{0,16})(?!${IDENT}${VALUE_END})|(?<![ \t](?::=|=>|=)[ \t]{0,16}))` +
    raw`(?!${IDENT}[ \t]{0,16}${closers})` +
    raw`(?![A-Za-z]{1,256}[ \t]{1,16}[A-Za-z])` +
    raw`${run}${VALUE_END}`
  );
}
const UNQUOTED_VALUE = unquotedValue(raw`${UNQUOTED_CHAR}{1,512}`);

/**
 * A password typed by a person: symbols and brackets inside (`p*[~x`, `a{b}c`), commas between characters
 * (`abc,def,ghi!`, up to three in a row: `GDSqo,,[0PvUc`), `&` unless a URL parameter follows; never
 * ending on a closing bracket or a comma, so `f(password=abc1)` keeps its `)`.
 */
const PASSWORD_RUN =
  raw`(?:[^\s"'\x60,;&\\]|,{1,3}(?=[^\s,])|&(?![A-Za-z_][A-Za-z0-9_]{0,64}=)){0,511}` +
  raw`[^\s"'\x60,;&\\)\]}>]`;
const PASSWORD_VALUE = unquotedValue(
  // Not a path (`PWD=/tmp`), not a call (`z.string().min(8)`, `getpass()`, PowerShell's `ConvertTo-…`:
  // until 2026-12-07 `$securePass = ConvertTo-SecureString "…"` lost the cmdlet's name, review s63f).
  raw`(?![~/]|\.{1,2}/)(?![A-Za-z_$][\w$]{0,64}(?:\.[A-Za-z_$][\w$]{0,64}){0,8}\(|ConvertTo-)` +
    PASSWORD_RUN,
  raw`(?:[;)}\]]|,{1,3}(?=\s|$))`,
);

/**
 * `=`, `:=`, `=>` (not `==`), or a `:` followed by a blank or a quote: YAML and JSON, but not the
 * `user:token@host` of a URL or the `user:password` of `curl -u` (their own rules handle those). A
 * Markdown bold name may close around the colon (`**Password:** …`; `**Password**:` in `assignment`).
 */
const SEPARATOR =
  raw`(?:[ \t]{0,16}(?::=|=>|=)(?![=:])[ \t]{0,16}` +
  raw`|[ \t]{0,16}:(?=[ \t]|\\?["'\x60]|\*\*[ \t])(?:\*\*)?[ \t]{0,16})`;

/**
 * `<key>["']? <sep> ["']?<value>["']?` where <key> is one of `keys` (the sensitive word the key name ENDS
 * with: `DB_PASSWORD=`, `"clientSecret":`, `auth_token:`), and <sep> is `=`, `:`, `:=` or `=>`. Group 1 is
 * the value. `token_count: 12`, `max_tokens=100`, `passwordless: true` do not match: the separator must
 * follow the keyword directly (after an optional closing quote or `]`).
 */
function assignment(
  keys: string[],
  options: { tokenLike?: boolean; key?: string; unquoted?: string; caseSensitive?: boolean } = {},
): RegExp {
  const alternatives = options.key ?? [...keys].sort((a, b) => b.length - a.length).join('|');
  // Token-like values (tokens, API keys) have a digit or are long: `"token": "Understanding"` in a
  // logprobs listing is a word, not a credential.
  // Not past a `]` (`apikey]=apikey]=…` scanned 255 at each keyword: review s65f).
  // A value's first character first: a keyword before `&`, `,` (`&token=&token=…`) fails at once, not after
  // 255 characters (4 MB/s until review s66p).
  const tokenLike = options.tokenLike
    ? raw`(?=${NON_END})(?=[^\s"'\x60\]]{0,255}[0-9]|[^\s"'\x60\]]{20})`
    : '';
  const source =
    raw`(?:${alternatives})(?:\\?["'\x60]|\*\*)?\]?${SEPARATOR}(?:\\?["'\x60])?` +
    // No value is longer than 512 characters (QUOTED_VALUE, UNQUOTED_VALUE, PASSWORD_VALUE). Where none
    // matches, such a run with `]` in it is one match too (`apikey]=apikey]=…`, 4 MB/s until review s65f).
    raw`(?:${tooLong(NON_END, 512)}|${tokenLike}(${QUOTED_VALUE}|${options.unquoted ?? UNQUOTED_VALUE})|` +
    tooLong(raw`[^\s"'\x60,;&)}>\\]`, 512) +
    ')';
  return new RegExp(source, options.caseSensitive ? 'y' : 'iy');
}

/**
 * Where a flag's value ends: a blank, a quote (the end of `sh -c "… -pPW"`: review s65f), `,;|&)]`, the end.
 */
const ARG_END = raw`(?=[\s"'\x60,;|&)\]]|$)`;
/** From one quoted argv element to the next (`"--requirepass", "PW"` in `docker inspect`'s `"Cmd"`). */
const NEXT_ARG = raw`["'],\s{0,32}(?=["'])`;

/**
 * A command-line flag's value after `=` or blanks (group 1 a quote, group 2 the value: `min` to 512
 * characters, not starting with `not`). A run of 513 characters none of which can end a value comes first
 * (tooLong): a match without a secret, after which the scan resumes. Until 2026-12-07 text repeating
 * `--api-key=x` backtracked through 512 characters at every keyword (1 MB/s; review s63f).
 */
const FLAG_VALUE = (min: number, not: string) =>
  raw`(?:=|[ \t]{1,16}|${NEXT_ARG})(?:${tooLong(raw`[^\s"'\x60;|&)]`, 512)}|` +
  raw`(["']?)(?![$%{<${not}-])([^\s"'\x60]{${min},512})\1${ARG_END})`;

/**
 * Between a secret's name and its value in prose (`password-in-prose`, `secret-in-prose`): `is`, `was` or
 * `has been`, then `now` or `set to` (`was reset to`, `changed to`); or `to` alone after a verb of setting
 * a few words before (`I set the admin password to …`; not `I sent the password to alice@…`). Until
 * 2026-12-07 only `is` and `was` (review s63f).
 */
const TOLD =
  raw`[ \t]{1,4}(?:is|was|has been|to\b(?<=(?:set|chang)[a-z]{0,3}(?:[ \t][\w'-]{1,24}){1,5}[ \t]to))` +
  raw`[ \t]{1,4}(?:(?:now|(?:re)?set to|changed to)[ \t]{1,4})?`;

/**
 * From a command to its short flag's `-` (`cli-password-short-flag`): up to 200 characters, not past a pipe;
 * a blank or a comma before the flag's quote (compact JSON argv `["redis-cli","-a",…]`: review s65i).
 */
const FLAG_GAP = raw`[^\n|;&]{0,200}?[ \t,]["']?-`;

/** A MySQL or MariaDB command (`mysql`, `mysqldump`, `mariadb-dump`…) and the blank after it. */
const MYSQL = raw`(?:mysql|mariadb)[A-Za-z]{0,10}["']?[ \t,]`;

/** A keyword per alternative of `words` (`a|b|c`), between `before` and `after`. */
const spelled = (words: string, before: string, after: string) =>
  words.split('|').map((word) => before + word + after);

/** Names of URL query parameters that hold a secret (`url-query-secret`: its keywords with `=` after). */
const QUERY_SECRETS =
  'access_token|refresh_token|id_token|auth_token|session_token|private_token|token|api_key|apikey|' +
  'api-key|client_secret|secret|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|' +
  'x-goog-signature|x-goog-credential|password|passwd|pwd|auth';

/** Words of a `--…` flag that takes a secret (`cli-secret-flag`: its keywords with `-` before). */
const CLI_SECRETS = 'password|passwd|passphrase|token|secret|api-key|apikey|access-key';

// Shared fragments for keyed rules (twilio, discord, aws secret key).
const KEY_SEP = raw`(?:\\?["'\x60])?\]?[ \t]{0,16}(?::=|=>|=|:)[ \t]{0,16}(?:\\?["'\x60])?`;

/**
 * A word in either case, letter by letter (`[Aa][Ww][Ss]`), for patterns that must stay case-sensitive
 * elsewhere: under the `i` flag `[A-Z]` (even `\p{Lu}`) matches every letter.
 */
const anyCase = (word: string) => word.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);

/**
 * Blanks alone between a name and its value, as a command line writes them (`aws configure set
 * aws_secret_access_key <key>`, review s52f), where KEY_SEP needs `=` or `:`. Taken only before a value
 * that has an upper-case and a lower-case letter within its first `n` characters: a random base64 key lacks
 * either about once in a billion, while prose (`the aws_secret_access_key field`), lower-case hex (a git
 * SHA) and `$VARS` have no such mix. The pattern must then be case-sensitive (see anyCase).
 */
const BLANK_SEP = (n: number) =>
  raw`[ \t]{1,16}(?:\\?["'\x60])?` +
  raw`(?=[A-Za-z0-9\/+]{0,${n - 1}}[A-Z])(?=[A-Za-z0-9\/+]{0,${n - 1}}[a-z])`;
/** An AWS secret access key (group 1), whole. */
const AWS_SECRET = raw`([A-Za-z0-9\/+]{40})(?![A-Za-z0-9\/+=])`;

/**
 * Keywords of an assignment rule: each word followed by what can come next in `<key>["']? <sep>` (a quote,
 * `]`, a blank, `=` or `:`), so that `"key"` inside a tool schema or `token_count` never wakes the rule.
 */
function assigned(...words: string[]): string[] {
  return words.flatMap((w) => [...'=:"\'`] \t\\*'].map((end) => w + end));
}

/**
 * A namespaced identifier: lower case, words joined by `:`, `/` or `.` (`user:42:profile`,
 * `uploads/2026/a.png`, `alias/app-prod`). Values under `*Key`, `*Token` names that look like this are
 * cache keys, object keys and aliases; random secrets are mixed-case, or hex without separators.
 */
const NAMESPACED = /^[a-z0-9_-]*[a-z][a-z0-9_-]*(?:[:/.][a-z0-9_{}*-]+)+$/;

/** A lower-case UUID. */
const UUID = '[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}';

/** A cheap first test for keyed rules with common keywords: `=` or `:` follows (after a quote or `]`). */
const SEPARATOR_AHEAD = (keyword: string) =>
  raw`(?=${keyword}(?:\\?["'\x60]|\*\*)?\]?[ \t]{0,16}[:=])`;

/**
 * Where a `.env` or shell name ends in its secret suffix: the name starts a token (line start, a blank, a
 * quote, `;`, `&`, `|`, `(`) and is upper-case words joined by `_` (`MYSQL_ROOT_` before `PASSWORD=`).
 */
const ENV_NAME = raw`(?<=(?:^|[\s"'\x60;&|(])(?:[A-Z0-9]{1,40}_){0,8})`;

/** Names of keys that are not secrets: `PUBLIC_KEY`, `sort_key`, `idempotencyKey`, `SITE_KEY` (reCAPTCHA). */
const NOT_SECRET_KEY_NAMES =
  'public|publishable|primary|foreign|sort|partition|hash|range|cache|idempotency|websocket|ssh|routing|s3|' +
  'object|file|lookup|dedup|kms|site|anon|row|column|index|search|group|map|i18n|translation|parent|child|' +
  'composite|unique|shard|bucket|blob|license_?file|sign|cursor|page|next|prev|pk|fk|instrumentation|' +
  'dedupe|' +
  'redis|lock|queue|local_?storage|session_?storage|react|list|dict|sort_?by|group_?by|message';

/** A line break, real or escaped in JSON text (`\n`, `\r\n`). */
const LINE_BREAK = raw`(?:\r?\n|(?:\\r)?\\n)`;
/** A line of base64 in a PEM block. */
const PEM_LINE = '[A-Za-z0-9+/=]{1,128}';
/** Before a PEM line: an indentation (YAML's `tls.key: |`), or a line number and a tab (`cat -n`). */
const PEM_PREFIX = raw`[ \t]{0,64}(?:[0-9]{1,9}\t)?`;

/**
 * Before `value` (a lookbehind): a `name` or `key` field (`ParameterKey` too) whose value ends in a word of
 * save.ts SENSITIVE_KEY (`DB_PASSWORD`, `X-Api-Key`, `SMTP_PASS`), then a comma or a line break. Every
 * run is bounded and each is closed by a character the next cannot take: the lookbehind cannot backtrack
 * more than a few hundred steps. Group 1 holds the word when it names a password or a secret, and is unset
 * for names of tokens, auth settings and keys (PAIR_TOKEN_VALUE).
 */
const PAIR_NAME =
  raw`(?<=(?:name|key)(?:\\?["'])?[ \t]{0,16}:[ \t]{0,16}(?:\\?["'])?[A-Za-z0-9_./-]{0,64}` +
  raw`(?:(password|passwd|passphrase|secret|credentials?|secret_key_base|(?<![A-Za-z0-9])pass|[_-]pwd?)|` +
  raw`token|auth|authorization|apikey|` +
  raw`(?:api|access|private|secret|signing|master|encryption|client|account)[_-]?key)` +
  raw`(?:\\?["'])?[ \t]{0,16}(?:,[ \t]{0,16})?(?:${LINE_BREAK}[ \t]{0,64})?(?:\\?["'])?(?:parameter)?)`;

/**
 * After PAIR_NAME's `value`: under a name of a token, an auth setting or a key (group 1 unset: a
 * backreference to it matches nothing, `(?=\1)` holds and `(?!\1)` fails), only a token-like value, as the
 * same name written directly gets (`generic-token`, `AUTH=`: 8 characters, a digit or 20, and a letter). A
 * setting's word stays (`SMTP_AUTH` `login`, `ENABLE_TOKEN` `enabled`): until 2026-12-06 every name went
 * as a password did (review s57f). Under a password's name (group 1 set) any value, as before.
 */
const PAIR_TOKEN_VALUE =
  raw`(?:(?!\1)|(?=\1)(?=(?:\\?["'\x60])?\]?${SEPARATOR}(?:\\?["'\x60])?` +
  raw`(?=[^\s"'\x60\\]{8})(?=[^\s"'\x60]{0,255}[0-9]|[^\s"'\x60]{20})(?=[^\s"'\x60]{0,255}[A-Za-z])))`;

/** One `name=value` pair of a cookie string (group 1: the value); not attributes, not analytics ids. */
const COOKIE_PAIR = new RegExp(
  raw`(?:^|;)[ \t]*` +
    raw`(?!(?:path|domain|expires|max-age|samesite|secure|httponly|priority|partitioned|` +
    raw`version|comment)=)` +
    raw`(?!(?:_ga|_gid|_gat|_fbp|_fbc|_gcl|__utm|_hj|ajs_anonymous_id|_clck|_clsk)[^=;\s]{0,64}=)` +
    raw`[^=;\s]{1,256}=([^;\s]{1,4096})`,
  'dgi',
);

/**
 * Keywords of Discord bot tokens: the first three characters of the base64 of a numeric id (a digit
 * 1-9, then any digit, then a digit's high bits): `MTA`, `MTE`, … `OTk` in lower case.
 */
function discordKeywords(): string[] {
  const out = new Set<string>();
  const b64 = (s: string) => btoa(s).toLowerCase().slice(0, 3);
  for (let a = 1; a <= 9; a++) for (let b = 0; b <= 9; b++) out.add(b64(`${a}${b}0`));
  return [...out];
}

/** Names of XML elements that hold a secret (`<password>…</password>`). */
const XML_SECRETS = 'password|passwd|secret|token|apikey|api_key|api-key';

export const rules: Rule[] = [
  // ------------------------------------------------------------------------------------ AI providers
  {
    id: 'openai-project-key',
    keywords: ['sk-proj-', 'sk-none-'],
    // The body stops before `_`/`-` and the prefix (never in a random key; where another key starts): a
    // rejected run of `sk-proj-_` was read again at each keyword inside it (2 MB/s until 2026-12-07, s65f).
    pattern: /sk-(?:proj|None)-(?:(?![_-]sk-(?:proj|None)-)[\w-]){40,300}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'openai-service-account-key',
    keywords: ['sk-svcacct-'],
    pattern: /sk-svcacct-[A-Za-z0-9_-]{40,300}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'openai-admin-key',
    keywords: ['sk-admin-'],
    pattern: /sk-admin-[A-Za-z0-9_-]{40,300}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'openai-legacy-key',
    keywords: ['sk-'],
    pattern: /sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    // Other `sk-` keys (DeepSeek, Moonshot, many OpenAI-compatible gateways): 32+ alphanumerics with a digit.
    id: 'sk-prefixed-key',
    keywords: ['sk-'],
    pattern: /sk-(?=[A-Za-z]{0,199}[0-9])[A-Za-z0-9]{32,200}(?![A-Za-z0-9_-])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'anthropic-api-key',
    keywords: ['sk-ant-'],
    pattern: /sk-ant-[A-Za-z0-9_-]{40,300}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'groq-api-key',
    keywords: ['gsk_'],
    pattern: /gsk_[A-Za-z0-9]{40,64}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'xai-api-key',
    keywords: ['xai-'],
    pattern: /xai-[A-Za-z0-9]{60,120}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'openrouter-api-key',
    keywords: ['sk-or-v1-'],
    pattern: /sk-or-v1-[a-f0-9]{64}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'huggingface-token',
    keywords: ['hf_'],
    pattern: /hf_[A-Za-z0-9]{30,40}(?![A-Za-z0-9_])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'replicate-api-token',
    keywords: ['r8_'],
    pattern: /r8_[A-Za-z0-9]{37}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'perplexity-api-key',
    keywords: ['pplx-'],
    pattern: /pplx-[A-Za-z0-9]{40,64}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'langsmith-api-key',
    keywords: ['lsv2_pt_', 'lsv2_sk_'],
    pattern: /lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'pinecone-api-key',
    keywords: ['pcsk_'],
    // The body stops at the next keyword, so repeated keywords cannot make the scans quadratic.
    pattern: /pcsk_(?:(?!pcsk_)[A-Za-z0-9_]){40,120}(?![A-Za-z0-9_])/y,
    boundary: true,
    entropy: 3,
  },

  // ------------------------------------------------------------------------------------ cloud
  {
    id: 'aws-access-key-id',
    keywords: ['akia', 'asia', 'abia', 'acca'],
    pattern: /(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'aws-secret-access-key',
    keywords: [
      'secret_access_key',
      'secretaccesskey',
      'secret-access-key',
      'secret access key',
      'secret key',
      'accesskey',
      'credentials',
    ],
    // `=` or `:` after the name, or blanks alone before a key of both cases (`aws configure set
    // aws_secret_access_key <key>`, `rclone config create … secret_access_key <key>`: BLANK_SEP). Since
    // review s65f also a table's `|` (`aws … --output table`), `Secret key:` (prose beside `Access key:
    // AKIA…`), and the unnamed field of `aws iam create-access-key` or `aws sts … --output text` (a line
    // of tab-separated fields: the key id, a date, the secret). Since review s65i also `aws configure`'s
    // prompt with its hint (`Secret Access Key [None]: `), and the text output with its tabs as blanks.
    pattern: new RegExp(
      raw`(?:${anyCase('secret')}(?:[ _-]?${anyCase('access')}[ _-]?| )${anyCase('key')}` +
        raw`(?: \[[^\]\n]{0,40}\])?(?:${KEY_SEP}|(?:[ \t]{0,16}\|)?${BLANK_SEP(40)})|` +
        raw`(?:ACCESSKEY|CREDENTIALS)[ \t]{1,16}A[KS]IA[A-Z2-7]{16}(?:[ \t]{1,16}\S{0,40})?${BLANK_SEP(40)})` +
        AWS_SECRET,
      'y',
    ),
    group: 1,
    entropy: 3,
    placeholders: true,
  },
  {
    // The signature of a SigV4 `Authorization` header or a presigned URL.
    id: 'aws-sigv4-signature',
    keywords: ['signature='],
    pattern: /signature=([a-f0-9]{64})(?![A-Za-z0-9])/iy,
    group: 1,
  },
  {
    id: 'google-api-key',
    keywords: ['aiza'],
    pattern: /AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/y,
    boundary: true,
  },
  {
    id: 'google-oauth-access-token',
    keywords: ['ya29.'],
    pattern: /ya29\.[A-Za-z0-9_-]{20,2048}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'google-oauth-client-secret',
    keywords: ['gocspx-'],
    pattern: /GOCSPX-[A-Za-z0-9_-]{24,40}(?![A-Za-z0-9_-])/y,
    boundary: true,
  },
  {
    id: 'google-oauth-refresh-token',
    keywords: ['1//0'],
    pattern: /1\/\/0[A-Za-z0-9_-]{30,512}/y,
    boundary: true,
    entropy: 3,
  },
  {
    // A legacy FCM server key (`AAAA…:APA91b…`) or registration token; the part before `:` is extended back.
    id: 'firebase-fcm-key',
    keywords: [':apa91b'],
    pattern: /(?<=(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{11,30}):APA91b[A-Za-z0-9_-]{100,200}/y,
    extendBack: /[A-Za-z0-9_-]/,
    extendBackMax: 30,
  },
  {
    id: 'azure-storage-account-key',
    keywords: ['accountkey='],
    pattern: /AccountKey=([A-Za-z0-9+/]{40,100}={0,2})/iy,
    group: 1,
    entropy: 3,
  },
  {
    id: 'azure-shared-access-key',
    keywords: ['sharedaccesskey='],
    pattern: /SharedAccessKey=([A-Za-z0-9+/]{32,100}={0,2})/iy,
    group: 1,
    entropy: 3,
  },
  {
    // Azure AD / Entra client secrets: 3 chars, a digit, `Q~`, 31-34 chars. The keyword is the `Q~`.
    id: 'azure-ad-client-secret',
    keywords: ['q~'],
    pattern:
      /(?<=(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}[0-9])Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/y,
    extendBack: /[A-Za-z0-9_~.-]/,
    extendBackMax: 4,
  },
  {
    id: 'digitalocean-token',
    keywords: ['dop_v1_', 'doo_v1_', 'dor_v1_'],
    pattern: /do[por]_v1_[a-f0-9]{64}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'alibaba-access-key-id',
    keywords: ['ltai'],
    pattern: /LTAI[A-Za-z0-9]{12,20}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'databricks-token',
    keywords: ['dapi'],
    pattern: /dapi[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'vault-token',
    keywords: ['hvs.', 'hvb.', 'hvr.'],
    pattern: /hv[sbr]\.[A-Za-z0-9_-]{24,512}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'terraform-cloud-token',
    keywords: ['.atlasv1.'],
    pattern: /(?<=(?<![A-Za-z0-9])[A-Za-z0-9]{14})\.atlasv1\.[A-Za-z0-9_=-]{60,100}/y,
    extendBack: /[A-Za-z0-9]/,
    extendBackMax: 14,
  },
  {
    id: 'pulumi-access-token',
    keywords: ['pul-'],
    pattern: /pul-[a-f0-9]{40}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'flyio-token',
    keywords: ['fo1_', 'fm1a_', 'fm1r_', 'fm2_'],
    // The long bodies stop at the next keyword, so repeated keywords cannot make the scans quadratic.
    pattern:
      /(?:fo1_(?:(?![_-]fo1_)[\w-]){40,64}|fm(?:1[ar]|2)_(?:(?!fm[12])[A-Za-z0-9+/=_-]){50,4096})/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'heroku-api-key',
    keywords: ['hrku-'],
    pattern: /HRKU-[A-Za-z0-9_-]{40,100}(?![A-Za-z0-9_-])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'netlify-token',
    keywords: ['nfp_', 'nfc_'],
    pattern: /nf[pc]_[A-Za-z0-9]{36,40}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'supabase-token',
    keywords: ['sbp_', 'sb_secret_'],
    pattern: /(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,80})(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'planetscale-token',
    keywords: ['pscale_tkn_', 'pscale_pw_', 'pscale_oauth_'],
    pattern: /pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'doppler-token',
    keywords: ['dp.pt.', 'dp.st.', 'dp.sa.', 'dp.ct.', 'dp.scim.', 'dp.audit.'],
    pattern:
      /dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,64}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'tailscale-key',
    keywords: ['tskey-'],
    pattern: /tskey-(?:[a-z]{3,10}-)?[A-Za-z0-9]{6,40}-[A-Za-z0-9]{20,64}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'dynatrace-token',
    keywords: ['dt0c01.'],
    pattern: /dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'newrelic-key',
    keywords: ['nrak-', 'nrii-'],
    pattern: /NR(?:AK|II)-[A-Za-z0-9_-]{27,32}(?![A-Za-z0-9_-])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'onepassword-service-account-token',
    keywords: ['ops_eyj'],
    pattern: /ops_eyJ(?:(?!ops_)[A-Za-z0-9+/_-]){100,4096}={0,3}/y,
    boundary: true,
  },

  // ------------------------------------------------------------------------------------ code hosting, CI, registries
  {
    // No word boundary before GitHub's prefixes (nor the fine-grained one's): 36 random characters after
    // them are a token wherever they start, and one glued to a word (`push` + `ghp_…` in a webhook's
    // event header) was stored (review s61b).
    id: 'github-pat',
    keywords: ['ghp_'],
    pattern: /ghp_[A-Za-z0-9]{36}(?![A-Za-z0-9])/y,
    entropy: 3,
  },
  {
    id: 'github-oauth-token',
    keywords: ['gho_'],
    pattern: /gho_[A-Za-z0-9]{36}(?![A-Za-z0-9])/y,
    entropy: 3,
  },
  {
    id: 'github-app-token',
    keywords: ['ghu_', 'ghs_'],
    pattern: /gh[us]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9])/y,
    entropy: 3,
  },
  {
    id: 'github-refresh-token',
    keywords: ['ghr_'],
    pattern: /ghr_[A-Za-z0-9]{36,255}(?![A-Za-z0-9])/y,
    entropy: 3,
  },
  {
    id: 'github-fine-grained-pat',
    keywords: ['github_pat_'],
    pattern: /github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}(?![A-Za-z0-9])/y,
  },
  {
    id: 'gitlab-pat',
    keywords: ['glpat-'],
    pattern: /glpat-[A-Za-z0-9_-]{20,200}(?:\.[A-Za-z0-9_-]{1,100}){0,3}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'gitlab-runner-token',
    keywords: ['glrt-', 'glrtr-'],
    pattern: /glrtr?-[A-Za-z0-9_-]{20,200}(?:\.[A-Za-z0-9_-]{1,100}){0,3}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'gitlab-deploy-token',
    keywords: ['gldt-'],
    pattern: /gldt-[A-Za-z0-9_-]{20,200}(?:\.[A-Za-z0-9_-]{1,100}){0,3}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'gitlab-token',
    keywords: [
      'glptt-',
      'glcbt-',
      'glft-',
      'glsoat-',
      'gloas-',
      'glimt-',
      'glagent-',
      'glffct-',
      'glwt-',
    ],
    pattern:
      /gl(?:ptt|cbt|ft|soat|oas|imt|agent|ffct|wt)-[A-Za-z0-9_-]{20,200}(?:\.[A-Za-z0-9_-]{1,100}){0,3}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'npm-token',
    keywords: ['npm_'],
    pattern: /npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    // `//registry.npmjs.org/:_auth=<base64>` in .npmrc (`_authToken` is a generic token).
    id: 'npmrc-auth',
    keywords: ['_auth'],
    pattern: /_auth[ \t]*=[ \t]*([A-Za-z0-9+/]{8,1024}={0,2})(?![A-Za-z0-9+/=])/iy,
    group: 1,
    entropy: 2.5,
  },
  {
    id: 'pypi-token',
    keywords: ['pypi-ageichlwas5vcmc', 'pypi-agendgvzdc5wexbplm9yzw'],
    pattern: /pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,1000}/y,
    boundary: true,
  },
  {
    id: 'rubygems-api-key',
    keywords: ['rubygems_'],
    pattern: /rubygems_[a-f0-9]{48}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'nuget-api-key',
    keywords: ['oy2'],
    pattern: /oy2[a-z0-9]{43}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'dockerhub-token',
    keywords: ['dckr_pat_', 'dckr_oat_'],
    pattern: /dckr_(?:pat|oat)_[A-Za-z0-9_-]{24,64}(?![A-Za-z0-9_-])/y,
    boundary: true,
    entropy: 3,
  },
  {
    // `"auth": "<base64 user:pass>"` in ~/.docker/config.json.
    id: 'docker-config-auth',
    keywords: ['"auth'],
    pattern: /"auth\\?"[ \t]*:[ \t]*\\?"([A-Za-z0-9+/]{8,1024}={0,2})\\?"/y,
    group: 1,
    entropy: 2.5,
  },
  {
    id: 'buildkite-token',
    keywords: ['bkua_'],
    pattern: /bkua_[a-f0-9]{40}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'sourcegraph-token',
    keywords: ['sgp_'],
    pattern: /sgp_(?:(?:[a-f0-9]{16}|local)_)?[a-f0-9]{40}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'postman-api-key',
    keywords: ['pmak-'],
    pattern: /PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![A-Za-z0-9])/iy,
    boundary: true,
  },
  {
    id: 'prefect-api-key',
    keywords: ['pnu_'],
    pattern: /pnu_[A-Za-z0-9]{36}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'atlassian-api-token',
    keywords: ['atatt3'],
    pattern: /ATATT3[A-Za-z0-9_=-]{60,300}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'linear-api-key',
    keywords: ['lin_api_', 'lin_oauth_'],
    pattern: /lin_(?:api_[A-Za-z0-9]{40}|oauth_[a-f0-9]{64})(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'figma-token',
    keywords: ['figd_'],
    pattern: /figd_[A-Za-z0-9_-]{38,64}(?![A-Za-z0-9_-])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'contentful-token',
    keywords: ['cfpat-'],
    pattern: /CFPAT-[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/y,
    boundary: true,
  },
  {
    id: 'sentry-org-token',
    keywords: ['sntrys_'],
    pattern: /sntrys_eyJ(?:(?!sntrys_)[A-Za-z0-9+/=_-]){30,2048}/y,
    boundary: true,
  },
  {
    id: 'sentry-user-token',
    keywords: ['sntryu_'],
    pattern: /sntryu_[a-f0-9]{64}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'grafana-cloud-token',
    keywords: ['glc_'],
    pattern: /glc_[A-Za-z0-9+/]{32,400}={0,2}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'grafana-service-account-token',
    keywords: ['glsa_'],
    pattern: /glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![A-Za-z0-9])/y,
    boundary: true,
  },

  // ------------------------------------------------------------------------------------ messaging, payments, SaaS
  {
    id: 'slack-bot-token',
    keywords: ['xoxb-'],
    pattern: /xoxb-[0-9]{1,16}-[A-Za-z0-9-]{10,250}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'slack-user-token',
    keywords: ['xoxp-'],
    pattern: /xoxp-[0-9]{1,16}-[A-Za-z0-9-]{10,250}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'slack-legacy-token',
    keywords: ['xoxa-', 'xoxr-', 'xoxs-', 'xoxo-'],
    pattern: /xox[arso]-[0-9]{1,16}-[A-Za-z0-9-]{10,250}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'slack-config-token',
    keywords: ['xoxe'],
    pattern: /xoxe(?:\.xox[bp])?-[0-9]-[A-Za-z0-9-]{20,300}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'slack-app-token',
    keywords: ['xapp-'],
    pattern: /xapp-[0-9]-[A-Za-z0-9-]{20,250}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'slack-webhook-url',
    keywords: ['hooks.slack.com/'],
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9_/+-]{20,200})/y,
    group: 1,
  },
  {
    id: 'discord-webhook-url',
    keywords: ['discord.com/api/webhooks/', 'discordapp.com/api/webhooks/'],
    pattern: /discord(?:app)?\.com\/api\/webhooks\/[0-9]{17,20}\/([A-Za-z0-9_-]{60,80})/y,
    group: 1,
  },
  {
    id: 'discord-bot-token',
    keywords: ['discord'],
    pattern: new RegExp(
      raw`discord[A-Za-z0-9_.-]{0,24}?(?:token|secret)${KEY_SEP}` +
        raw`([A-Za-z0-9_-]{20,30}\.[A-Za-z0-9_-]{5,8}\.[A-Za-z0-9_-]{25,45}` +
        raw`|[A-Za-z0-9_-]{32})(?![A-Za-z0-9_.-])`,
      'iy',
    ),
    group: 1,
    entropy: 3,
  },
  {
    id: 'teams-webhook-url',
    keywords: ['webhook.office.com/webhookb2/'],
    pattern: /webhook\.office\.com\/webhookb2\/([A-Za-z0-9@/_-]{40,400})/y,
    group: 1,
  },
  {
    // `123456789:AA…`: the keyword is `:AA`, the bot id before it is extended back.
    id: 'telegram-bot-token',
    keywords: [':aa'],
    pattern: /(?<=(?<![0-9])[0-9]{8,10}):AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/y,
    extendBack: /[0-9]/,
    extendBackMax: 10,
  },
  {
    id: 'twilio-api-key',
    keywords: ['sk'],
    pattern: /SK[0-9a-f]{32}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'twilio-auth-token',
    keywords: ['twilio'],
    pattern: new RegExp(
      raw`twilio[A-Za-z0-9_.-]{0,24}?(?:auth[_-]?token|api[_-]?secret|secret|token)` +
        raw`${KEY_SEP}([a-f0-9]{32})(?![A-Za-z0-9])`,
      'iy',
    ),
    group: 1,
    entropy: 3,
  },
  {
    id: 'sendgrid-api-key',
    keywords: ['sg.'],
    pattern: /SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{40,50}(?![A-Za-z0-9_-])/y,
    boundary: true,
  },
  {
    id: 'mailgun-api-key',
    keywords: ['key-'],
    pattern: /key-[a-f0-9]{32}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    // `<32 hex>-us12`: the keyword is the datacenter suffix, the key before it is extended back.
    id: 'mailchimp-api-key',
    keywords: ['-us'],
    pattern: /(?<=(?<![A-Za-z0-9])[a-f0-9]{32})-us[0-9]{1,2}(?![A-Za-z0-9])/y,
    extendBack: /[a-f0-9]/,
    extendBackMax: 32,
  },
  {
    id: 'stripe-secret-key',
    keywords: ['sk_live_', 'sk_test_'],
    pattern: /sk_(?:live|test)_[A-Za-z0-9]{20,250}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'stripe-restricted-key',
    keywords: ['rk_live_', 'rk_test_'],
    pattern: /rk_(?:live|test)_[A-Za-z0-9]{20,250}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'stripe-webhook-secret',
    keywords: ['whsec_'],
    pattern: /whsec_[A-Za-z0-9+/]{24,100}={0,2}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'square-access-token',
    keywords: ['sq0atp-'],
    pattern: /sq0atp-[A-Za-z0-9_-]{22,60}(?![A-Za-z0-9_-])/y,
    boundary: true,
  },
  {
    id: 'square-oauth-secret',
    keywords: ['sq0csp-'],
    pattern: /sq0csp-[A-Za-z0-9_-]{40,60}(?![A-Za-z0-9_-])/y,
    boundary: true,
  },
  {
    id: 'shopify-token',
    keywords: ['shpat_', 'shpss_', 'shpca_', 'shppa_'],
    pattern: /shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'notion-token',
    keywords: ['ntn_', 'secret_'],
    pattern: /(?:ntn_[A-Za-z0-9]{40,50}|secret_[A-Za-z0-9]{43})(?![A-Za-z0-9_])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'mapbox-secret-token',
    keywords: ['sk.eyj'],
    pattern: /sk\.eyJ[A-Za-z0-9_-]{20,512}\.[A-Za-z0-9_-]{20,128}/y,
    boundary: true,
  },
  {
    id: 'adobe-client-secret',
    keywords: ['p8e-'],
    pattern: /p8e-[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])/y,
    boundary: true,
    entropy: 3,
  },

  // ------------------------------------------------------------------------------------ formats
  {
    id: 'age-secret-key',
    keywords: ['age-secret-key-1'],
    pattern: /AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?![A-Za-z0-9])/y,
  },
  {
    // header.payload.signature; both header and payload are base64url JSON objects (`eyJ`). Not inside a
    // longer base64url run (the lookbehind), so a run of `-eyJ-eyJ…` costs one scan, not one per `eyJ`.
    id: 'jwt',
    keywords: ['eyj'],
    pattern:
      /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,4096}\.eyJ[A-Za-z0-9_-]{4,8192}\.[A-Za-z0-9_-]{10,2048}/y,
    boundary: true,
  },
  {
    // A whole PEM/PGP private key block; the newlines may be real or `\n` escapes inside a JSON string.
    // The body stops at the next `-----`, so each BEGIN costs at most one scan to the following marker.
    id: 'private-key-block',
    keywords: ['-----begin'],
    pattern: new RegExp(
      raw`-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:(?!-----)[\s\S]){1,16384}` +
        raw`-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----`,
      'y',
    ),
  },
  {
    // A block cut off before its END line: redact the header and the key material after it (to 16 KB).
    id: 'private-key-block-truncated',
    keywords: ['-----begin'],
    pattern: new RegExp(
      raw`-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----` +
        raw`(?=(?:\s|\\[nrt]){0,8}(?:[A-Za-z0-9+/=]{16}|[A-Za-z-]{1,32}:))` +
        raw`(?:(?!-----)[A-Za-z0-9+/=\s:,.-]|\\[nrt]){16,16384}`,
      'y',
    ),
  },
  {
    // The key material before an END line, without its BEGIN (a key read in two chunks: the second holds
    // the primes). Group 1, in the lookbehind: whole lines of base64 (real or `\n` escaped line breaks),
    // the first at the text's start, a line's or a quote's; each line indented or numbered as `cat -n` and
    // read tools print it (PEM_PREFIX; until 2026-12-06 such a tail was kept, review s57f).
    id: 'private-key-block-tail',
    keywords: ['-----end'],
    pattern: new RegExp(
      raw`(?<=(?:^|[\r\n"'\x60]|\\n)${PEM_PREFIX}` +
        raw`(${PEM_LINE}(?:${LINE_BREAK}${PEM_PREFIX}${PEM_LINE}){0,255})${LINE_BREAK}${PEM_PREFIX})` +
        raw`-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----`,
      'y',
    ),
    group: 1,
    minLength: 16,
  },

  // ------------------------------------------------------------------------------------ URLs and HTTP
  {
    // `scheme://user:password@host`: only the password is redacted.
    id: 'url-credentials',
    keywords: ['://'],
    // `://` (3), the user (256), `:` (1), the password (256), then the `@`.
    requires: { char: '@', within: 516 },
    pattern: new RegExp(
      raw`:\/\/[^\s:@/?#"'<>[\]\\]{0,256}:(?!\$\{|\{\{|<)` +
        raw`((?:[^\s/?#@"'<>[\]\\]|[/?#@[\]](?=[^\s"'<>\\@]{0,256}@[A-Za-z0-9[])){1,256})` +
        raw`@(?=[A-Za-z0-9[])`,
      'y',
    ),
    group: 1,
    minLength: 3,
    placeholders: true,
  },
  {
    id: 'url-query-secret',
    keywords: spelled(QUERY_SECRETS, '', '='),
    pattern: new RegExp(
      raw`(?:${QUERY_SECRETS})=(?!\$\{|\{\{|<|%[A-Za-z_]+%)([^&#?;\s"'<>()[\]\\]{1,4096})`,
      'iy',
    ),
    group: 1,
    after: '?&;',
    minLength: 4,
    placeholders: true,
  },
  {
    id: 'url-query-key',
    keywords: ['key='],
    pattern: /key=([A-Za-z0-9_.~%+/-]{16,1024}={0,2})(?![A-Za-z0-9_.~%+/=-])/iy,
    group: 1,
    after: '?&;',
    entropy: 3.2,
    placeholders: true,
  },
  {
    // `Authorization: Bearer|Basic|Token …` (headers, JSON, `curl -H`): the credential, not the scheme word.
    // Blanks alone before a quoted scheme too (nginx `proxy_set_header Authorization "Basic …"`, Apache
    // `RequestHeader set Authorization "…"`; review s63f).
    id: 'authorization-header',
    keywords: ['authorization'],
    pattern:
      /authorization(?:\\?["'`])?[ \t]{0,16}(?:[:=]|(?=\\?["']))[ \t]{0,16}(?:\\?["'`])?[ \t]{0,16}(?:bearer|basic|token|bot|negotiate|ntlm|apikey|api-key|key|sso-key|jwt|dpop|pat|otp|sharedkeylite|sharedkey|ssws)[ \t]{1,16}(?![$%{<[])([A-Za-z0-9._~+/=:-]{0,4095}[A-Za-z0-9_~+/=:-])/iy,
    group: 1,
    minLength: 8,
    placeholders: true,
  },
  {
    // `Authorization: <credential>` with no scheme word (a raw token with a digit, alone on its line). A run
    // longer than a value is one match with no secret (as `tooLong`): until 2026-12-07 each keyword in it
    // scanned 4,096 characters (0.8 MB/s; review s65f).
    id: 'authorization-header-bare',
    keywords: ['authorization'],
    pattern:
      /authorization(?:\\?["'`])?[ \t]{0,16}[:=][ \t]{0,16}(?:\\?["'`])?(?:[\w.~+/=:-]{4097}|(?![$%{<[])(?=[A-Za-z._~+/=:-]{0,255}[0-9])([A-Za-z0-9._~+/=:-]{15,4095}[A-Za-z0-9_~+/=:-])(?=[\s"'`,;\\]|$)(?![ \t]{1,16}[A-Za-z0-9]))/iy,
    group: 1,
    entropy: 3,
    placeholders: true,
  },
  {
    // A bare `Bearer <long token>` (logs, prose, code).
    id: 'bearer-token',
    keywords: ['bearer'],
    pattern:
      /bearer[ \t]{1,16}(?![$%{<[])(?=[A-Za-z._~+/-]{0,255}[0-9])([A-Za-z0-9._~+/-]{19,4095}[A-Za-z0-9_~+/-]={0,2})/iy,
    group: 1,
    boundary: true,
    entropy: 3,
    placeholders: true,
  },

  // ------------------------------------------------------------------------------------ command lines and config files
  {
    // `curl -u user:pass`, `--user user:pass`: the password.
    id: 'curl-user-credentials',
    keywords: ['-u', '--user'],
    pattern:
      /(?:-u|--user)(?:[ \t]{1,16}|=)(["']?)(?![$%{<-])[^\s:"'@/]{1,128}:(?![$%{<])(?![0-9]{1,10}(?:[\s"']|$))([^\s"']{3,256})\1(?=[\s"'`;|&)]|$)/y,
    group: 2,
    boundary: true,
    placeholders: true,
  },
  {
    // `--password xyz`, `--api-token=xyz`, `--client-secret 'xyz'`, aws's `--secret-string` (review s68a);
    // keytool's and jarsigner's `-storepass`, `-keypass`, `-srcstorepass`, `-destkeypass` (one dash; s63f).
    id: 'cli-secret-flag',
    // The keywords start at the `-` before the word, so that plain words (`password`, `token`) cost nothing.
    keywords: [...spelled(CLI_SECRETS, '-', ''), 'storepass', 'keypass'],
    pattern: new RegExp(
      raw`(?:-(?<=--(?:[A-Za-z0-9]{1,32}-){0,4})(?:${CLI_SECRETS})(?:-string)?|` +
        raw`(?<=-(?:src|dest)?)(?:store|key)pass)` +
        FLAG_VALUE(3, ''),
      'iy',
    ),
    group: 2,
    minLength: 4,
    placeholders: true,
  },
  {
    // ~/.netrc: `machine host login user password secret`.
    id: 'netrc-password',
    keywords: ['password ', 'password\t'],
    pattern:
      /(?<=(?:^|\s)login\s{1,16}\S{1,128}\s{1,16})password[ \t]{1,16}(?![$%{<])([^\s"']{3,256})/iy,
    group: 1,
    placeholders: true,
  },
  {
    // SQL that sets a password (review s59l): MySQL, MariaDB and Oracle `CREATE USER 'app'@'%' IDENTIFIED BY
    // 'pw'`, `ALTER USER app IDENTIFIED WITH caching_sha2_password BY 'pw'`, `GRANT … IDENTIFIED BY 'pw'`.
    id: 'sql-identified-by',
    keywords: ['identified'],
    pattern: new RegExp(
      raw`identified(?:[ \t]{1,16}with[ \t]{1,16}[\w'"]{1,64})?[ \t]{1,16}by[ \t]{1,16}` +
        raw`(?:password[ \t]{1,16})?${SQL_LITERAL}`,
      'iy',
    ),
    group: 2,
    minLength: 4,
    placeholders: true,
  },
  {
    // PostgreSQL `ALTER USER app WITH PASSWORD 'pw'`, `CREATE ROLE app LOGIN PASSWORD 'pw'`, `… ENCRYPTED
    // PASSWORD 'pw'`: after what comes before it in CREATE and ALTER ROLE/USER (the role's name, an option,
    // `CONNECTION LIMIT n`, `VALID UNTIL '…'`), not in prose (`the password 'field' is required`). Each
    // lookbehind needs a blank just before `password`: a SQL verb anywhere back on the line cost 33 ms a MB
    // of hostile `password 'a` repeated. Gradle's `storePassword '…'` and `keyPassword "…"` (Groovy's call
    // syntax, no `=`) too (review s63f).
    id: 'sql-password-literal',
    keywords: ["password '", 'password "'],
    pattern: new RegExp(
      raw`(?<=\b(?:${SQL_ROLE_WORDS})[ \t]{1,16}|\b(?:user|role)[ \t]{1,16}[^\s;]{1,64}[ \t]{1,16}|` +
        raw`\blimit[ \t]{1,16}-?[0-9]{1,10}[ \t]{1,16}|\buntil[ \t]{1,16}'[^'\n]{1,64}'[ \t]{1,16}|store|key)` +
        raw`password[ \t]${SQL_LITERAL}`,
      'iy',
    ),
    group: 2,
    minLength: 4,
    placeholders: true,
  },
  {
    // `<password>…</password>`, `<apiKey>…</apiKey>` (Maven settings, .NET config, SOAP).
    id: 'generic-xml-secret',
    keywords: spelled(XML_SECRETS, '', '>'),
    pattern: new RegExp(raw`(?:${XML_SECRETS})>(?![$%{<])([^<>\s]{1,512})<\/`, 'iy'),
    group: 1,
    minLength: 4,
    placeholders: true,
  },
  {
    id: 'generic-password',
    // `_pw` too (`DB_PW=`, `admin_pw:`; review s63f): `pw` alone is too short a word.
    keywords: assigned('password', 'passwd', 'passphrase', 'pwd', '_pw'),
    pattern: assignment(['password', 'passwd', 'passphrase', 'pwd', '_pw'], {
      unquoted: PASSWORD_VALUE,
    }),
    group: 1,
    minLength: 4,
    placeholders: true,
  },
  {
    // Names ending in `pass` (`SMTP_PASS`, `ansible_become_pass`, `smtpPass`), but not `bypass` or `compass`,
    // nor a test's verdict, a bare `PASS:` (`--- PASS: TestX (0.00s)`: until 2026-12-07, review s65f).
    id: 'generic-pass',
    keywords: assigned('pass'),
    pattern: assignment([], {
      key:
        SEPARATOR_AHEAD('(?:pass|Pass|PASS)') +
        raw`(?:(?<![A-Za-z])(?:pass|Pass|PASS(?!:(?<!\SPASS:)))|(?<=[a-z0-9])Pass)`,
      unquoted: PASSWORD_VALUE,
      caseSensitive: true,
    }),
    group: 1,
    minLength: 4,
    placeholders: true,
  },
  {
    id: 'generic-secret',
    keywords: assigned('secret'),
    pattern: assignment(['secret'], { unquoted: PASSWORD_VALUE }),
    group: 1,
    minLength: 6,
    placeholders: true,
  },
  {
    id: 'generic-secret-key',
    keywords: assigned('secret_key', 'secretkey', 'secret-key', 'secret_key_base'),
    // Django and Rails keys have brackets and symbols: the same value run as a typed password.
    pattern: assignment(['secret_key', 'secretkey', 'secret-key', 'secret_key_base'], {
      unquoted: PASSWORD_VALUE,
    }),
    group: 1,
    minLength: 8,
    placeholders: true,
  },
  {
    // Names ending in PAT (personal access token): `AZURE_DEVOPS_PAT`, `gitlabPat`.
    id: 'generic-pat',
    keywords: assigned('pat'),
    pattern: assignment([], {
      key: SEPARATOR_AHEAD('pat') + raw`(?<=[A-Za-z0-9][_-]?)pat`,
      tokenLike: true,
    }),
    group: 1,
    minLength: 16,
    entropy: 3,
    not: NAMESPACED,
    placeholders: true,
  },
  {
    id: 'generic-token',
    keywords: assigned('token'),
    // Not pagination and sync state: `NextToken`, `nextPageToken`, `continuation_token`, `sync_token`.
    pattern: assignment([], {
      key:
        raw`(?<!(?:next|page|continuation|sync|cursor|pagination|resume|prev|previous|` +
        raw`delta|change|stream)[_-]?)` +
        'token',
      tokenLike: true,
    }),
    group: 1,
    minLength: 8,
    entropy: 2.5,
    not: NAMESPACED,
    placeholders: true,
  },
  {
    id: 'generic-api-key',
    keywords: assigned('api_key', 'apikey', 'api-key'),
    pattern: assignment(['api_key', 'apikey', 'api-key'], { tokenLike: true }),
    group: 1,
    minLength: 8,
    entropy: 2.5,
    placeholders: true,
  },
  {
    id: 'generic-access-key',
    keywords: assigned('access_key', 'accesskey', 'access-key'),
    pattern: assignment(['access_key', 'accesskey', 'access-key'], { tokenLike: true }),
    group: 1,
    minLength: 8,
    entropy: 2.5,
    placeholders: true,
  },
  {
    id: 'generic-private-key',
    keywords: assigned('private_key', 'privatekey', 'private-key'),
    pattern: assignment(['private_key', 'privatekey', 'private-key'], { tokenLike: true }),
    group: 1,
    minLength: 8,
    entropy: 2.5,
    placeholders: true,
  },
  // ---------------------------------------------------------------------------------- more provider formats
  {
    id: 'langfuse-secret-key',
    keywords: ['sk-lf-'],
    pattern: new RegExp(raw`sk-lf-${UUID}(?![A-Za-z0-9])`, 'y'),
    boundary: true,
  },
  {
    id: 'elevenlabs-api-key',
    keywords: ['sk_'],
    pattern: /sk_[a-f0-9]{48}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    // `IQoJb3JpZ2luX2Vj…` (base64 of the token's binary header) or the older `FwoGZXIvYXdz…`.
    id: 'aws-session-token',
    keywords: ['iqojb3jpz2lux2vj', 'fwogzxivyxdz', 'fqogzxivyxdz'],
    pattern: /(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz|FQoGZXIvYXdz)[A-Za-z0-9+/]{100,4096}={0,2}/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'aws-session-token-assignment',
    keywords: [
      'session_token',
      'sessiontoken',
      'security_token',
      'securitytoken',
      'security-token',
    ],
    // `=` or `:` after the name; blanks alone (`aws configure set aws_session_token <token>`: BLANK_SEP)
    // after the AWS names only, `aws_session_token` and `aws_security_token`.
    pattern: new RegExp(
      raw`(?:(?:${anyCase('session')}|${anyCase('security')})[_-]?${anyCase('token')}${KEY_SEP}` +
        raw`|(?<=${anyCase('aws')}_)(?:${anyCase('session')}|${anyCase('security')})_${anyCase('token')}` +
        raw`${BLANK_SEP(100)})([A-Za-z0-9+/]{100,4096}={0,2})`,
      'y',
    ),
    group: 1,
    entropy: 3,
  },
  {
    id: 'tencent-secret-id',
    keywords: ['akid'],
    pattern: /AKID[A-Za-z0-9]{32}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    // Cloudflare Origin CA keys: `v1.0-` + 24 hex + `-` + 146 hex.
    id: 'cloudflare-origin-ca-key',
    keywords: ['v1.0-'],
    pattern: /v1\.0-[a-f0-9]{24}-[a-f0-9]{146}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    // `az storage account keys list`: `"keyName": "key1", "permissions": "FULL", "value": "<key>"`.
    id: 'azure-storage-keys-list',
    keywords: ['"keyname"'],
    pattern: new RegExp(
      raw`"keyName"\s{0,16}:\s{0,16}"[^"\n]{1,40}",\s{0,64}` +
        raw`(?:"permissions"\s{0,16}:\s{0,16}"[^"\n]{1,20}",\s{0,64})?` +
        raw`"value"\s{0,16}:\s{0,16}"([A-Za-z0-9+/]{40,100}={0,2})"`,
      'y',
    ),
    group: 1,
    entropy: 3,
  },
  {
    id: 'launchdarkly-key',
    keywords: ['sdk-', 'api-'],
    pattern: new RegExp(raw`(?:sdk|api)-${UUID}(?![A-Za-z0-9])`, 'y'),
    boundary: true,
  },
  {
    id: 'sonarqube-token',
    keywords: ['squ_', 'sqp_', 'sqa_'],
    pattern: /sq[upa]_[a-f0-9]{40}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'scaleway-access-key',
    keywords: ['scw'],
    pattern: /SCW[A-Z0-9]{17}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'render-api-key',
    keywords: ['rnd_'],
    pattern: /rnd_[A-Za-z0-9]{32}(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'jfrog-token',
    keywords: ['akcp', 'cmvmdgtuojaxoj'],
    pattern: /(?:AKCp[A-Za-z0-9]{69}|cmVmdGtuOjAxOj[A-Za-z0-9]{40,80})(?![A-Za-z0-9])/y,
    boundary: true,
    entropy: 3,
  },
  {
    id: 'hubspot-private-app-token',
    keywords: ['pat-'],
    pattern: new RegExp(raw`pat-(?:na|eu|ap)[0-9]-${UUID}(?![A-Za-z0-9])`, 'y'),
    boundary: true,
  },
  {
    // Airtable personal access tokens: `pat` + 14 characters + `.` + 64 hex.
    id: 'airtable-pat',
    keywords: ['pat'],
    pattern: /pat[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    // Twitter/X app bearer tokens start with 21 `A`s (a zero-padded app id).
    id: 'twitter-bearer-token',
    keywords: ['aaaaaaaaaaaaaaaaaaaaa'],
    pattern: /(?<![+/])A{21}[A-Za-z0-9%]{40,300}(?![A-Za-z0-9%])/y, // not inside a base64 blob
    boundary: true,
    entropy: 3,
  },
  {
    id: 'clickup-api-token',
    keywords: ['pk_'],
    pattern: /pk_[0-9]{6,12}_[A-Z0-9]{32}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'dropbox-access-token',
    keywords: ['sl.'],
    pattern: /sl\.(?:u\.)?[A-Za-z0-9_-]{130,1400}(?![A-Za-z0-9_-])/y,
    boundary: true,
    entropy: 3.5,
  },
  {
    id: 'circleci-token',
    keywords: ['ccipat_'],
    pattern: /CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'braintree-access-token',
    keywords: ['access_token$'],
    pattern: /access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    id: 'bitbucket-app-password',
    keywords: ['atbb'],
    pattern: /ATBB[A-Za-z0-9]{32}[A-F0-9]{8}(?![A-Za-z0-9])/y,
    boundary: true,
  },
  {
    // Square (`EAAA…`, 64 characters) and Meta/Facebook (`EAAB…`, `EAAG…`, longer) access tokens.
    id: 'square-or-meta-access-token',
    keywords: ['eaa'],
    pattern: /(?<![+/])EAA[A-Za-z][A-Za-z0-9_-]{56,512}(?![A-Za-z0-9_+/-])/y, // not inside a base64 blob
    boundary: true,
    entropy: 3.5,
  },
  {
    // Discord bot tokens: base64 of the numeric bot id (`M`/`N`/`O` + `T`/`j`/`z`/`D`…), `.`, 6, `.`, 27-38.
    id: 'discord-bot-token-format',
    keywords: discordKeywords(),
    pattern:
      /[MNO][TjzD][A-Za-z0-9]{21,24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_.-])/y,
    boundary: true,
    entropy: 3.5,
  },
  {
    // Laravel `APP_KEY=base64:…` and what `php artisan key:generate --show` prints.
    id: 'laravel-app-key',
    keywords: ['base64:'],
    // 32/16/48+ bytes
    pattern:
      /base64:(?:[A-Za-z0-9+/]{43}=|[A-Za-z0-9+/]{22}==|[A-Za-z0-9+/]{64,88}={0,2})(?![A-Za-z0-9+/=])/y,
    boundary: true,
    entropy: 3.5,
  },
  {
    // kubeconfig `client-key-data:` (a base64 PEM private key).
    id: 'kubeconfig-client-key-data',
    keywords: ['client-key-data'],
    pattern:
      /client-key-data\\?["']?[ \t]{0,16}:[ \t]{0,16}\\?["']?([A-Za-z0-9+/]{20,16384}={0,2})/y,
    group: 1,
  },
  {
    // A PEM private key, base64-encoded again (kubeconfig, Kubernetes secrets, CI variables).
    id: 'base64-private-key-block',
    keywords: ['ls0tls1crudjtib'],
    // After `-----BEGIN `: RSA, EC, (PKCS#8), OPENSSH, ENCRYPTED, DSA PRIVATE KEY and PGP PRIVATE KEY BLOCK.
    pattern: new RegExp(
      raw`LS0tLS1CRUdJTiB(?:SU0EgUFJJVkFURSBLRV|FQyBQUklWQVRFIEtFW|QUklWQVRFIEtFW|PUEVOU1NIIFBSSVZBVEUgS0VZ|` +
        raw`FTkNSWVBURUQgUFJJVkFURSBLRV|EU0EgUFJJVkFURSBLRV|QR1AgUFJJVkFURSBLRVkgQkxPQ0)` +
        raw`[A-Za-z0-9+/]{20,16384}={0,2}`,
      'y',
    ),
    boundary: true,
  },
  {
    // PuTTY `.ppk` files: the lines after `Private-Lines: n`.
    id: 'putty-private-key',
    keywords: ['private-lines:'],
    pattern: new RegExp(
      raw`Private-Lines:[ \t]{0,8}[0-9]{1,3}\r?\n` +
        raw`((?:[A-Za-z0-9+/=]{1,128}\r?\n){0,63}[A-Za-z0-9+/=]{1,128})(?=\r?\n|$)`,
      'iy',
    ),
    group: 1,
  },
  {
    // `Cookie:` / `Set-Cookie:` headers (HTTP dumps, JSON, devtools), `document.cookie = "…"`: each cookie's
    // value, not attributes.
    id: 'http-cookie',
    keywords: ['cookie'],
    // The pairs stop where another such header starts on the same line: the engine resumes after a match.
    pattern: new RegExp(
      raw`cookie(?:\\?["'])?[ \t]{0,16}[:=][ \t]{0,16}(?:\\?["'])?` +
        raw`((?:(?!cookie(?:\\?["'])?[ \t]{0,16}:)[^\r\n"'\\]){1,8192})`,
      'iy',
    ),
    group: 1,
    each: COOKIE_PAIR,
    minLength: 8,
    entropy: 3,
    placeholders: true,
  },
  {
    // Cookies as browser automation and HTTP libraries write them (review s68a): a storage state's or
    // `add_cookies([…])`'s `{"name": …, "value": "…"}`, `cookies={"sessionid": "…"}`; each quoted value
    // but a cookie's name and attributes, whole: a cookie's holds no blank, while a consent banner's
    // `cookies: {description: "Functionality cookies …"}` lost its first word (review s68e).
    id: 'cookie-list',
    keywords: ['cookies'],
    pattern: /cookies(?:\\?["'])?[ \t]{0,16}[:=(][ \t]{0,16}(\[[^\]]{1,16384}|\{[^}]{1,4096})/iy,
    group: 1,
    each: new RegExp(
      raw`(?<![\w.-])(?!name|domain|path|samesite|expires|max-?age|secure|httponly|priority|partitioned|` +
        raw`encoding)[\w.-]{1,64}(?:\\?["'])?[ \t]{0,16}:[ \t]{0,16}\\?["']([^"'\\\s]{1,4096})\\?["']`,
      'dgi',
    ),
    minLength: 8,
    entropy: 3,
    placeholders: true,
  },
  {
    // `curl -b "a=b; c=d"`, `--cookie 'a=b'`.
    id: 'curl-cookie',
    keywords: ['-b', '--cookie'],
    // The pairs stop at another `-b` or `--cookie` of the same command: the engine resumes after a match.
    pattern: new RegExp(
      raw`(?:-b|--cookie)(?:[ \t]{1,8}|=)["']?` +
        raw`((?:(?!(?<![A-Za-z0-9])(?:-b|--cookie)(?:[ \t]|=))[^"'\r\n]){1,8192})`,
      'y',
    ),
    group: 1,
    boundary: true,
    each: COOKIE_PAIR,
    minLength: 8,
    entropy: 3,
    placeholders: true,
  },
  {
    // A Netscape cookie jar line: domain, flag, path, secure, expiry, name, value (tab-separated).
    id: 'cookie-jar',
    keywords: ['\ttrue\t', '\tfalse\t'],
    pattern: new RegExp(
      raw`\t(?:TRUE|FALSE)\t[^\t\n]{1,256}\t(?:TRUE|FALSE)\t[0-9]{1,12}\t[^\t\n]{1,256}\t([^\s]{8,4096})`,
      'y',
    ),
    group: 1,
    entropy: 3,
  },
  {
    // Secret-named headers: `X-Api-Key:`, `x-functions-key:`, `Ocp-Apim-Subscription-Key:`, `X-Auth-Token:`.
    id: 'http-secret-header',
    keywords: ['-key', '-token', '-secret', 'apikey'].flatMap((w) =>
      [...':"\' \t\\'].map((e) => w + e),
    ),
    pattern: new RegExp(
      raw`(?=(?:-key|-token|-secret|apikey)(?:\\?["'])?[ \t]{0,16}:)` +
        raw`(?<!public|websocket|idempotency|cache|ssh|(?<![a-z])id)` +
        raw`(?:-key|-token|-secret|apikey)(?:\\?["'])?[ \t]{0,16}:[ \t]{0,16}(?:\\?["'])?` +
        raw`(?:${tooLong('[A-Za-z0-9._~+/=:-]', 4096)}|` +
        raw`(?![$%{<[])([A-Za-z0-9._~+/=:-]{16,4096})(?![A-Za-z0-9._~+/=:-]))`,
      'iy',
    ),
    group: 1,
    entropy: 3,
    placeholders: true,
  },
  {
    // `--account-key <key>`, `--api-key=<key>`, `--license-key '<key>'` (not a path: `--private-key ./k`).
    id: 'cli-key-flag',
    keywords: ['-key'],
    pattern: new RegExp(
      raw`(?<=--[A-Za-z0-9]{1,32}(?:-[A-Za-z0-9]{1,32}){0,3})-key` + FLAG_VALUE(16, '~./'),
      'iy',
    ),
    group: 2,
    entropy: 3,
    placeholders: true,
  },
  {
    // `?code=` of Azure Functions keys and OAuth authorization codes (long, random).
    id: 'url-query-code',
    keywords: ['code='],
    pattern: /code=([A-Za-z0-9_.~%+/-]{20,1024}={0,2})(?![A-Za-z0-9_.~%+/=-])/iy,
    group: 1,
    after: '?&',
    entropy: 3.2,
    placeholders: true,
  },
  {
    // .NET and Java XML: `<add key="ClearTextPassword" value="…"/>`, `<property name="password" value="…"/>`.
    id: 'xml-key-value-secret',
    keywords: ['<add', '<property', '<entry', '<setting', '<param'],
    pattern: new RegExp(
      raw`<(?:add|property|entry|setting|param|parameter)[ \t]{1,16}(?:key|name)[ \t]{0,8}=[ \t]{0,8}` +
        raw`"[^"\n]{0,80}(?:password|passwd|pwd|secret|token|api_?key|api-key|access_?key|secret_?key|` +
        raw`private_?key|credential)"` +
        raw`[ \t]{1,16}value[ \t]{0,8}=[ \t]{0,8}"([^"\n]{1,512})"`,
      'iy',
    ),
    group: 1,
    minLength: 4,
    placeholders: true,
  },
  {
    // wp-config.php and friends: `define('AUTH_KEY', '…')`, `define('DB_PASSWORD', '…')`.
    id: 'php-define-secret',
    keywords: ['define('],
    pattern: new RegExp(
      raw`define\([ \t]{0,8}['"][A-Z0-9_]{0,64}(?:KEY|SALT|SECRET|PASSWORD|TOKEN)['"][ \t]{0,8},` +
        raw`[ \t]{0,8}['"]([^'"\n]{6,512})['"]`,
      'y',
    ),
    group: 1,
    placeholders: true,
  },
  {
    // `mysql -uroot -pS3cret`, `mysqldump -p'…'` (the password is glued to `-p`).
    id: 'mysql-password-flag',
    keywords: ['mysql', 'mariadb'],
    // `mariadb` (7), a suffix (10), a quote and a blank (2), then the `-p` within 200.
    requires: { char: '-', within: 219 },
    // The `-p` before the next such command (a run reads no further): until 2026-12-07 text repeating
    // `mysql -` was read 200 characters at every keyword (4 MB/s; review s63f).
    pattern: new RegExp(
      raw`${MYSQL}(?:(?!${MYSQL})[^\n|;&]){0,200}?(?<=[ \t,]["']?)-p` +
        raw`(["']?)([^\s'"\x60-][^\s'"\x60]{2,127})\1${ARG_END}`,
      'y',
    ),
    group: 2,
    boundary: true,
    placeholders: true,
  },
  {
    // `redis-cli -a <pw>`, `sqlcmd -P <pw>`, `sshpass -p <pw>`, `docker login -p <pw>`; the value may be
    // glued to the flag (`-PSecret`, as sqlcmd and sshpass take it; review s63f). `mongo`, `ldap…`, `zip`,
    // `7z` and `az login` were here for a while that day: their words occur in other commands
    // (`docker run --name mongo -p 27017:27017`, `wget x.zip -P /opt`: review s63i), and telling where a
    // command starts did not fit the R2-only bundle. `gh secret|variable set … --body|-b <v>`, and `-p` after
    // `--service-principal` (`az login`), since review s68a; a variable's only when mixed-case as a random
    // key is: variables are not secret (`--body eu-west-1` was taken; review s68e).
    id: 'cli-password-short-flag',
    keywords: [
      'redis-cli',
      'sqlcmd',
      'sshpass',
      'docker login',
      'secret set',
      'variable set',
      'principal',
    ],
    // `docker login` (12), then the flag's `-` within 202 (after a blank and a quote).
    requires: { char: '-', within: 214 },
    pattern: new RegExp(
      raw`(?:redis-cli${FLAG_GAP}a|sqlcmd${FLAG_GAP}P|sshpass(?:[ \t]{1,8}|${NEXT_ARG}.)-p|docker login${FLAG_GAP}p|` +
        raw`secret set${FLAG_GAP}(?:-body|b)|principal${FLAG_GAP}p|variable set${FLAG_GAP}(?:-body|b)` +
        raw`(?=[\s"',]{0,40}(?=[^\s"']{0,63}[A-Z])[^\s"']{0,63}[a-z]))` +
        raw`(?:${NEXT_ARG}|[ \t]{0,8})(["']?)(?![$%{<-])([^\s'"\x60]{3,256})\1${ARG_END}`,
      'y',
    ),
    group: 2,
    placeholders: true,
  },
  {
    // `echo '<password>' | docker login --password-stdin` (and chpasswd, passwd --stdin, sudo -S). The
    // command is looked for before the next `echo`: text repeating `echo abc|` was read 200 characters at
    // every keyword (10 MB/s), and `echo x | tee log; echo $T | docker login …` took `x` (review s65i).
    // `echo -n`, and commands that store a secret (`wrangler secret put`, `gh secret set`, `docker secret
    // create`, `gcloud secrets versions add`), since review s68a. Not past `;`, `&` or `||` (review s68e:
    // `echo "Deploying v1.2.3" | tee -a log && wrangler secret put K < f` took the echoed words).
    id: 'echo-piped-password',
    keywords: ['echo'],
    pattern: new RegExp(
      raw`echo[ \t]{1,8}(?:-[neE]{1,2}[ \t]{1,8})?(["']?)(?![$%{<])((?:[^\s"'|]|(?!\1)[ \t|]){3,256})\1` +
        raw`[ \t]{0,8}\|[ \t]{0,8}(?=(?:(?!echo\s|\|\|)[^\n;&]){0,200}` +
        raw`(?:--password-stdin|chpasswd|passwd --stdin|sudo -S|secrets? (?:put|create|set)|versions add))`,
      'y',
    ),
    group: 2,
    boundary: true,
    placeholders: true,
  },
  {
    // openssl `-passout pass:<password>`, `-passin pass:…`, `-password pass:…`.
    id: 'openssl-pass-argument',
    keywords: ['pass:'],
    pattern: /(?<=-pass(?:in|out|word)?[ \t]{1,8})pass:([^\s'"]{3,256})/y,
    group: 1,
    placeholders: true,
  },
  {
    // redis.conf `requirepass` / `masterauth`; PowerShell's `ConvertTo-SecureString "<pw>" -AsPlainText`
    // (`-String '<pw>'` too; not a variable, a `-Flag` or a `(…)`); HTTP basic auth in Python,
    // `auth=("user", "<pw>")`, `HTTPBasicAuth('user', '<pw>')`, `aiohttp.BasicAuth(…)` (review s63f).
    id: 'redis-conf-password',
    keywords: ['requirepass', 'masterauth', 'convertto-securestring', 'auth=(', 'basicauth('],
    pattern: new RegExp(
      raw`(?:requirepass|masterauth|ConvertTo-SecureString(?: -String)?|` +
        raw`(?:BasicAuth|auth=)\(["'][^"'\n]{0,64}["'],(?= ["']))` +
        raw`(?:[ \t]{1,16}|${NEXT_ARG})(["']?)(?![$%{<(-])([^\s"']{3,256})\1`,
      'y',
    ),
    group: 2,
    placeholders: true,
  },
  {
    // `setx API_KEY <v>`, fish's `set -x DB_PASSWORD <v>`, `npm config set //host/:_authToken <v>`, `poetry
    // config pypi-token.pypi <v>`, `git config github.token <v>`, `doppler secrets set API_KEY <v>`: a
    // secret-sounding name, blanks, then a value with a digit (not `the config token parameter`; s68a).
    // The name ends in its secret word (or `.<repository>`, or up to two parts that name no file, path, id,
    // socket, folder, URL, name or type: `SECRET_KEY_BASE`, `DB_PASSWORD_PROD`, review s68h) and is not a
    // public key's, the value is not a home path: `SSH_AUTH_SOCK`, `KEYMAP`, `user.signingkey 3AA5C34371567BD2`,
    // `http.sslKey`, `auth/impersonate_service_account` were taken (review s68e).
    id: 'cli-set-secret-name',
    keywords: ['setx ', 'set -x ', 'config ', 'secrets set '],
    pattern: new RegExp(
      raw`(?:setx|set -x|config(?: set)?(?: --[a-z]{1,16})?|secrets set)[ \t]{1,8}` +
        raw`(?=[^\s=]{0,128}?(?:token|pass(?:word|wd|phrase)?|secret|(?<!signing|ssl)key|auth)s?` +
        raw`(?:[_-](?!(?:sock|file|path|id|dir|url|name|type)\b)[a-z0-9]{1,16}){0,2}` +
        raw`(?:\.[\w-]{1,64})?[ \t])[^\s=]{1,128}[ \t]{1,8}` +
        raw`(["']?)(?![$%{<(~-])(?=[^\s"'\x60]{0,255}[0-9])([^\s"'\x60]{8,512})\1${ARG_END}`,
      'iy',
    ),
    group: 2,
    placeholders: true,
  },
  {
    // A ~/.pgpass after the file is named: each `host:port:database:user:password` line (and comments)
    // up to 64 lines: until review s68a only the first entry's password was redacted, and until review
    // s68e none after a CRLF line end (Windows' pgpass.conf) or a blank line.
    id: 'pgpass-line',
    keywords: ['pgpass'],
    pattern: new RegExp(
      raw`pgpass[^\n]{0,80}((?:\r?\n[ \t]{0,16}(?:#[^\n]{0,200}|` +
        raw`[^\s:]{1,128}:(?:[0-9]{1,5}|\*)(?::[^\s:]{1,128}){2}:\S{3,256})?){1,64})`,
      'y',
    ),
    group: 1,
    each: /\n[^\s:#]{1,128}:(?:[0-9]{1,5}|\*)(?::[^\s:]{1,128}){2}:(\S{3,256})/dg,
    placeholders: true,
  },
  {
    // A wallet's seed phrase (BIP-39: 12 to 24 words of 3 to 8 letters) under its name: `MNEMONIC="…"`,
    // `--mnemonic "…"`, `fromPhrase("…")`, `seed phrase: …` (review s68a).
    id: 'seed-phrase',
    keywords: ['mnemonic', 'phrase'],
    pattern: new RegExp(
      raw`(?:mnemonic|phrase)(?:\\?["'\x60])?(?:[ \t]{0,16}[:=(]|[ \t](?=["']))[ \t]{0,16}` +
        raw`(?:\\?["'\x60])?((?:[a-z]{3,8}[ \t]{1,4}){11,23}[a-z]{3,8})(?![a-z])`,
      'iy',
    ),
    group: 1,
  },
  {
    // Node-provider keys in a URL's path: `https://eth-mainnet.g.alchemy.com/v2/<key>`, `infura.io/v3/<key>`.
    id: 'rpc-url-key',
    keywords: ['alchemy.com/v2/', 'infura.io/v3/'],
    pattern: /(?:alchemy\.com\/v2|infura\.io\/v3)\/([\w-]{20,64})(?![\w-])/y,
    group: 1,
    entropy: 3,
  },
  {
    // wpa_supplicant `psk="…"`.
    id: 'wifi-psk',
    keywords: ['psk='],
    pattern: /psk=(?:"([^"\n]{8,63})"|([a-f0-9]{64}))/y,
    group: 1,
    boundary: true,
    placeholders: true,
  },
  {
    // A password told in prose: `my db password is Xk9#mP2q`, `the password was set to …`, `I set the admin
    // password to …` (TOLD). Only values with a digit or a symbol, so `the password is incorrect` stays.
    id: 'password-in-prose',
    keywords: ['password ', 'passphrase ', 'passcode '],
    pattern: new RegExp(
      raw`pass(?:word|phrase|code)${TOLD}` +
        raw`\\?["'\x60]?(?=[^\s"'\x60\\]{0,127}[0-9!#$%^&*@~+=?])([^\s"'\x60\\]{5,127}[^\s"'\x60\\.,;:!?)])`,
      'iy',
    ),
    group: 1,
    minLength: 6,
    entropy: 2.5,
    placeholders: true,
  },
  {
    // A key or token told in prose: `the signing key is now 4f9c…`. Token-like values only (16+ characters
    // with a digit), so `the shortcut key is Ctrl+Shift+P` and `the token is expired` stay.
    id: 'secret-in-prose',
    keywords: ['key ', 'token ', 'secret '],
    pattern: new RegExp(
      raw`(?:key|token|secret)${TOLD}\\?["'\x60]?` +
        raw`(?=[^\s"'\x60\\]{0,255}[0-9])([^\s"'\x60\\]{15,255}[^\s"'\x60\\.,;:!?)])`,
      'iy',
    ),
    group: 1,
    entropy: 3,
    not: NAMESPACED,
    placeholders: true,
  },
  {
    // `.env` / shell / `docker -e` assignments to an upper-case name ending in PASSWORD (or PASS, PWD): the
    // whole value up to a blank, symbols included (`POSTGRES_PASSWORD=p*[~x`). Paths (`PWD=/home/x`) are not.
    id: 'env-password-assignment',
    keywords: ['password=', 'passwd=', 'pass=', 'pwd=', 'passphrase='],
    pattern: new RegExp(
      raw`${ENV_NAME}(?:PASSWORD|PASSWD|PASS|PWD|PASSPHRASE)=(?![~./"'])([^\s"'\x60\\]{4,512})`,
      'y',
    ),
    group: 1,
    placeholders: true,
  },
  {
    // The same for names ending in SECRET, TOKEN, PAT, CREDENTIALS: `SESSION_SECRET=Ab#[…`, `ADO_PAT=…`.
    id: 'env-secret-assignment',
    keywords: ['secret=', 'token=', 'pat=', 'credentials=', 'auth='],
    pattern: new RegExp(
      raw`${ENV_NAME}(?:SECRET|TOKEN|PAT|CREDENTIALS|AUTH)=(?![~./"'])([^\s"'\x60\\]{8,512})`,
      'y',
    ),
    group: 1,
    entropy: 2.5,
    placeholders: true,
  },
  {
    // Names ending in KEY (`ENCRYPTION_KEY=`, `RAILS_MASTER_KEY=`): only token-like values (16+ characters,
    // a digit, 3 bits of entropy), and not the names of keys that are not secret (PUBLIC_KEY, SORT_KEY…).
    id: 'env-key-assignment',
    keywords: ['key='],
    pattern: new RegExp(
      raw`${ENV_NAME}(?<!(?:${NOT_SECRET_KEY_NAMES.toUpperCase()})_)KEY=(?![~./"'])` +
        raw`(?=[^\s"'\x60\\]{0,511}[0-9])([^\s"'\x60\\]{16,512})`,
      'y',
    ),
    group: 1,
    entropy: 3,
    not: NAMESPACED,
    placeholders: true,
  },
  {
    // A secret-sounding name and its value in sibling fields (PAIR_NAME): Kubernetes `env` (`- name:
    // DB_PASSWORD` then `value: …`, YAML or JSON), ECS task definitions, HAR headers, CloudFormation.
    id: 'name-value-pair',
    // `val` too (`{"key": "api_key", "val": "…"}`, review s59l).
    keywords: ['value', 'val'].flatMap((w) => [...':"\'\\'].map((end) => w + end)),
    pattern: assignment([], {
      key: SEPARATOR_AHEAD('val(?:ue)?') + PAIR_NAME + 'val(?:ue)?' + PAIR_TOKEN_VALUE,
      unquoted: PASSWORD_VALUE,
    }),
    group: 2,
    minLength: 4,
    placeholders: true,
  },
  {
    // A secret's name and its value in neighbouring cells: a Markdown table (`| DB_PASSWORD | Xk9m… |`,
    // bold or code names too) or tab-separated columns (a spreadsheet, `kubectl … -o custom-columns`).
    // A cell is often a type or a description (`| password | string |`), so only values with an upper-case
    // letter, a lower-case letter and a digit, 8 or more characters, filling the cell (review s59l).
    id: 'table-cell-secret',
    keywords: [
      'password',
      'passwd',
      'passphrase',
      'secret',
      'token',
      'api_key',
      'apikey',
      'api-key',
    ].flatMap((w) => [...' |\t*`'].map((end) => w + end)),
    // Case-sensitive (anyCase): under the i flag `[A-Z]` matches every letter.
    pattern: new RegExp(
      raw`(?:${['password', 'passwd', 'passphrase', 'secret', 'token'].map(anyCase).join('|')}|` +
        raw`${anyCase('api')}[_-]?${anyCase('key')})(?:\*\*|\x60)?` +
        raw`(?:[ \t]{0,16}\|[ \t]{0,16}|\t[ \t]{0,16})(?:\*\*|\x60|["'])?` +
        raw`(?=[^\s|\x60*]{0,255}[A-Z])(?=[^\s|\x60*]{0,255}[a-z])(?=[^\s|\x60*]{0,255}[0-9])` +
        raw`([^\s|\x60*"']{8,256})(?=(?:\*\*|\x60|["'])?(?:[ \t]{0,16}\||[ \t]*(?:\r?\n|$)|\t))`,
      'y',
    ),
    group: 1,
    entropy: 2.5,
    // Nor a type's name (`Uint8Array`, `Base64String`, `OAuth2Token`, `int32`): words that each start
    // upper-case, and numbers; a password runs lower-case on after a digit or a lone capital. A type has one
    // number, not after a lower-case letter at the end: `hunter2Quux77Zed` and `Winter2025` are passwords
    // (until 2026-12-07 they were kept, review s63f).
    not: /^(?!\D*\d+\D+\d|.*[a-z]\d+$)[a-z]*(?:[A-Z][a-z]+|[0-9]+|[A-Z]+(?![a-z]))+$/,
    placeholders: true,
  },
  {
    // Terraform: `variable "db_password" { … default = "…" }`, the default of a variable whose name ends in
    // a secret's word (`sensitive = true` hides it from plans, not from a session that read the file).
    id: 'terraform-variable-default',
    keywords: ['variable ', 'variable\t'],
    pattern: new RegExp(
      raw`variable[ \t]{1,16}"[A-Za-z0-9_-]{0,64}` +
        raw`(?:password|passwd|passphrase|secret|token|api_?key|access_?key|private_?key|secret_?key)"` +
        // Blocks before the default (`validation { … }`, `object({ … })`, `${…}`), two levels deep.
        raw`[ \t]{0,16}\{(?:[^{}]|\{(?:[^{}]|\{[^{}]{0,256}\}){0,1024}\}){0,2048}?` +
        raw`\bdefault[ \t]{0,16}=[ \t]{0,16}"([^"\n\\$]{4,512})"`,
      'iy',
    ),
    group: 1,
    placeholders: true,
  },
  {
    // `encryption_key: …`, `"masterKey": "…"`, `signing-key = "…"` in YAML, JSON, TOML, INI and code.
    id: 'generic-key',
    keywords: assigned('key'),
    pattern: assignment([], {
      key:
        SEPARATOR_AHEAD('key') +
        raw`(?<=[A-Za-z0-9][_-]?)(?<!(?:${NOT_SECRET_KEY_NAMES}|monkey|turkey|hot)[_-]?)key`,
      tokenLike: true,
    }),
    group: 1,
    minLength: 16,
    entropy: 3,
    not: NAMESPACED,
    placeholders: true,
  },
];
