/**
 * Synthetic agent transcripts for bench/pipeline.ts: deterministic (seeded PRNG), realistic in shape
 * (system prompt with tool schemas, user turns, assistant prose with code blocks, tool calls with JSON
 * arguments, tool results with logs, stack traces, diffs, JSON payloads, UUIDs, git SHAs, URLs, a little
 * non-ASCII), with fake secrets in real formats sprinkled at about one per `secretEvery` bytes. Every fake
 * secret is built at run time from the PRNG; none is copied from anywhere.
 */
import type { Message } from '../lib/model/session.js';
import { mulberry32 } from '../test/support/prng.js';

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const B62 = UPPER + LOWER + DIGITS;
const B64 = B62 + '+/';
const B64URL = B62 + '-_';
const HEX = '0123456789abcdef';
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A fake secret that was planted: `value` is the part a redactor must remove. */
export interface Planted {
  kind: string;
  value: string;
  /** Index of the message that holds it (set by transcript()). */
  message?: number;
}

class Gen {
  readonly r: () => number;
  constructor(seed: number) {
    this.r = mulberry32(seed);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.r() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  chars(alphabet: string, n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.r() * alphabet.length)];
    return s;
  }
  /** Random characters with at least one digit (token formats usually have one). */
  token(alphabet: string, n: number): string {
    for (;;) {
      const s = this.chars(alphabet, n);
      if (/[0-9]/.test(s)) return s;
    }
  }
  uuid(): string {
    return `${this.chars(HEX, 8)}-${this.chars(HEX, 4)}-4${this.chars(HEX, 3)}-${this.pick(['8', '9', 'a', 'b'])}${this.chars(HEX, 3)}-${this.chars(HEX, 12)}`;
  }
  sha(): string {
    return this.chars(HEX, 40);
  }
  short(): string {
    return this.chars(HEX, 7);
  }
  iso(): string {
    const d = new Date(
      Date.UTC(
        2026,
        this.int(0, 10),
        this.int(1, 28),
        this.int(0, 23),
        this.int(0, 59),
        this.int(0, 59),
        this.int(0, 999),
      ),
    );
    return d.toISOString();
  }
  ident(): string {
    return (
      this.pick(IDENTS) +
      this.pick(['', 'Id', 'Count', 'Map', 'List', 'Handler', 'Config', 'State', 'Result'])
    );
  }
  path(): string {
    return `${this.pick(DIRS)}/${this.pick(FILES)}.${this.pick(['ts', 'ts', 'ts', 'tsx', 'py', 'go', 'rs', 'json', 'md'])}`;
  }
  url(): string {
    return this.pick([
      () => `https://github.com/${this.pick(ORGS)}/${this.pick(REPOS)}/pull/${this.int(10, 9999)}`,
      () =>
        `https://github.com/${this.pick(ORGS)}/${this.pick(REPOS)}/blob/${this.sha()}/${this.path()}#L${this.int(1, 400)}`,
      () =>
        `https://api.${this.pick(['example', 'acme', 'internal'])}.com/v2/${this.pick(['invoices', 'users', 'orders', 'events'])}?page=${this.int(1, 40)}&per_page=50&sort=created_at`,
      () =>
        `https://docs.${this.pick(['python.org/3/library', 'nodejs.org/api', 'rust-lang.org/std'])}/${this.pick(FILES)}.html#${this.ident().toLowerCase()}`,
      () => `https://www.npmjs.com/package/${this.pick(PACKAGES)}`,
      () =>
        `https://stackoverflow.com/questions/${this.int(1000000, 79999999)}/${this.pick(WORDS)}-${this.pick(WORDS)}-${this.pick(WORDS)}`,
      () =>
        `https://storage.googleapis.com/${this.pick(REPOS)}-artifacts/${this.uuid()}/report.html`,
    ])();
  }
  sentence(): string {
    const n = this.int(8, 22);
    const words: string[] = [];
    for (let i = 0; i < n; i++)
      words.push(this.chance(0.04) ? `\`${this.ident()}\`` : this.pick(WORDS));
    let s = words.join(' ');
    s = s[0]!.toUpperCase() + s.slice(1);
    return s + this.pick(['.', '.', '.', '.', ':', '?', ' —', '.']);
  }
  prose(sentences: number): string {
    const out: string[] = [];
    for (let i = 0; i < sentences; i++) out.push(this.sentence());
    if (this.chance(0.1)) out.push(this.pick(NON_ASCII));
    return out.join(' ');
  }
}

const WORDS = (
  'the a an of to in for on with and or but not this that it is was be are can will should would could ' +
  'function test tests file files module config configuration error errors retry timeout request response ' +
  'handler middleware cache session sessions storage bucket object key value map list index manifest schema ' +
  'parse serialise encode decode stream buffer chunk size limit byte bytes page cursor query filter sort order ' +
  'user users account tenant namespace device token tokens count context prompt model tool call result output ' +
  'input argument arguments return type interface class method field property default option options flag ' +
  'build compile lint format deploy release version branch commit merge rebase diff patch review change changes ' +
  'fix fixes fixed bug issue regression flaky slow fast memory leak latency throughput benchmark profile trace ' +
  'log logs logging warning debug info level stack frame line column path directory folder import export ' +
  'async await promise callback event loop worker thread process child signal exit status code message ' +
  'database table row column migration transaction lock unique constraint foreign primary ask task risk desk ' +
  'skip sketch skill Asia Europe America timezone locale unicode password reset secret manager rotation policy'
).split(' ');

const IDENTS = [
  'session',
  'manifest',
  'retry',
  'invoice',
  'tenant',
  'user',
  'order',
  'payload',
  'record',
  'entry',
  'cursor',
  'page',
  'bucket',
  'client',
  'worker',
  'queue',
  'job',
  'export',
  'import',
  'schema',
  'parser',
  'writer',
  'reader',
  'cache',
  'limiter',
  'token',
  'request',
  'response',
  'handler',
  'router',
  'store',
];
const DIRS = [
  'lib',
  'src',
  'src/api',
  'src/lib',
  'lib/storage',
  'lib/sessions',
  'app/models',
  'internal/http',
  'pkg/queue',
  'test',
  'test/unit',
  'scripts',
  'packages/core/src',
  'services/billing',
];
const FILES = [
  'index',
  'retry',
  'client',
  'server',
  'manifest',
  'store',
  'schema',
  'invoices',
  'users',
  'config',
  'export',
  'worker',
  'queue',
  'limiter',
  'codec',
  'handler',
  'router',
  'utils',
  'types',
  'main',
];
const ORGS = ['acme', 'satchel-dev', 'octo-org', 'example-co', 'infra-team'];
const REPOS = ['api', 'web', 'billing', 'satchel', 'platform', 'monorepo', 'exporter'];
const PACKAGES = [
  'zod',
  'hono',
  'vitest',
  'esbuild',
  'typescript',
  '@aws-sdk/client-s3',
  'fast-check',
  'undici',
  'pino',
  'date-fns',
];
const NON_ASCII = [
  'Das Ergebnis ist größer als erwartet.',
  'Voilà — c’est réglé.',
  '“Done” ✅',
  'Résumé: 3 échecs, 2 corrigés.',
  'テストは成功しました。',
  'Готово, тесты проходят.',
  '🚀 deployed',
  '±5 ms, ≈ 12 % faster',
];

const SYSTEM_PROMPT_HEAD =
  "You are a careful senior software engineer working in the user's repository through a sandboxed shell. " +
  'Read the relevant files before changing them, keep changes small and focused, run the test suite after ' +
  'each change, and explain what you did and why in a short summary at the end. Never push to the default ' +
  'branch, never print secrets from the environment (API keys, tokens, passwords), and ask before running ' +
  'commands that delete data or touch production systems.\n\n# Tools\n';

function systemPrompt(g: Gen): string {
  const tools = [
    'shell',
    'read_file',
    'write_file',
    'edit_file',
    'list_dir',
    'grep',
    'http_request',
    'web_search',
    'github__create_pull_request',
    'delegate_tasks',
  ].map((name) => ({
    type: 'function',
    function: {
      name,
      description: g.prose(2),
      parameters: {
        type: 'object',
        properties: Object.fromEntries(
          ['path', 'command', 'query', 'timeout_ms', 'max_tokens']
            .slice(0, g.int(1, 5))
            .map((p) => [
              p,
              {
                type: p.endsWith('ms') || p.startsWith('max') ? 'integer' : 'string',
                description: g.sentence(),
              },
            ]),
        ),
        required: ['path'],
      },
    },
  }));
  let s = SYSTEM_PROMPT_HEAD + JSON.stringify(tools, null, 2) + '\n\n# Environment\n';
  s += `cwd: /workspace/${g.pick(REPOS)}\nos: linux\nshell: bash\ndate: ${g.iso()}\ntimezone: Asia/Tokyo\nmax_tokens: 8192\n\n# Project notes\n`;
  for (let i = 0; i < 12; i++) s += `- ${g.prose(g.int(1, 3))}\n`;
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// Fake secrets in real formats, each in a realistic context

type SecretMaker = (g: Gen) => { text: string; planted: Planted[] };

const SECRETS: SecretMaker[] = [
  (g) => {
    const v = 'ghp_' + g.token(B62, 36);
    return {
      text: `git remote set-url origin https://x-access-token:${v}@github.com/${g.pick(ORGS)}/${g.pick(REPOS)}.git`,
      planted: [{ kind: 'github-pat (in URL)', value: v }],
    };
  },
  (g) => {
    const v = 'github_pat_' + g.token(B62, 22) + '_' + g.token(B62, 59);
    return {
      text: `export GITHUB_TOKEN=${v}`,
      planted: [{ kind: 'github-fine-grained-pat', value: v }],
    };
  },
  (g) => {
    const id = 'AKIA' + g.chars(BASE32, 16);
    const secret = g.token(B62 + '/+', 40);
    return {
      text: `[default]\naws_access_key_id = ${id}\naws_secret_access_key = ${secret}\nregion = eu-west-1`,
      planted: [
        { kind: 'aws-access-key-id', value: id },
        { kind: 'aws-secret-access-key', value: secret },
      ],
    };
  },
  (g) => {
    const v = 'sk-proj-' + g.token(B64URL, 64) + 'T3BlbkFJ' + g.token(B64URL, 64);
    return { text: `OPENAI_API_KEY="${v}"`, planted: [{ kind: 'openai-project-key', value: v }] };
  },
  (g) => {
    const v = 'sk-ant-api03-' + g.token(B64URL, 93) + 'AA';
    return {
      text: `client = anthropic.Anthropic(api_key="${v}")`,
      planted: [{ kind: 'anthropic-api-key', value: v }],
    };
  },
  (g) => {
    const v = `xoxb-${g.int(1e10, 9e10)}-${g.int(1e12, 9e12)}-${g.token(B62, 24)}`;
    return { text: `SLACK_BOT_TOKEN=${v}`, planted: [{ kind: 'slack-bot-token', value: v }] };
  },
  (g) => {
    const v = 'sk_live_' + g.token(B62, 99);
    return { text: `stripe.api_key = "${v}"`, planted: [{ kind: 'stripe-secret-key', value: v }] };
  },
  (g) => {
    const v = 'AIza' + g.token(B64URL, 35);
    return {
      text: `curl "https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=${v}"`,
      planted: [{ kind: 'google-api-key', value: v }],
    };
  },
  (g) => {
    const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const v = `${b64url({ alg: 'RS256', typ: 'JWT', kid: g.short() })}.${b64url({ sub: g.uuid(), iss: 'https://auth.example.com/', exp: g.int(1.7e9, 1.9e9), scope: 'read write' })}.${g.token(B64URL, 86)}`;
    return {
      text: `${g.iso()} DEBUG http: > GET /v2/me\n${g.iso()} DEBUG http: > Authorization: Bearer ${v}\n${g.iso()} DEBUG http: < 200 OK (${g.int(5, 300)} ms)`,
      planted: [{ kind: 'jwt (bearer header)', value: v }],
    };
  },
  (g) => {
    const lines: string[] = [];
    for (let i = 0; i < 25; i++) lines.push(g.chars(B64, 64));
    const v = `-----BEGIN RSA PRIVATE KEY-----\n${lines.join('\n')}\n-----END RSA PRIVATE KEY-----`;
    return {
      text: `$ cat deploy/id_rsa\n${v}\n`,
      planted: [{ kind: 'private-key-block', value: lines[10]! }],
    };
  },
  (g) => {
    const pw = g.token(B62, 12) + g.pick(['!', '_', '-', '.', '~']) + g.token(B62, 6);
    return {
      text: `DATABASE_URL=postgres://app_user:${pw}@db.internal.example.com:5432/app?sslmode=require`,
      planted: [{ kind: 'url-credentials', value: pw }],
    };
  },
  (g) => {
    const pw = g.token(B62, 10) + g.pick(['!', '#', '%', '_', '-']) + g.token(B62, 8);
    return {
      text: `DB_HOST=localhost\nDB_PORT=5432\nDB_USER=app\nDB_PASSWORD=${pw}\nLOG_LEVEL=debug`,
      planted: [{ kind: 'generic-password (.env)', value: pw }],
    };
  },
  (g) => {
    const v = 'npm_' + g.token(B62, 36);
    return {
      text: `//registry.npmjs.org/:_authToken=${v}`,
      planted: [{ kind: 'npm-token', value: v }],
    };
  },
  (g) => {
    const v = 'glpat-' + g.token(B64URL, 20);
    return {
      text: `curl --header "PRIVATE-TOKEN: ${v}" https://gitlab.example.com/api/v4/projects`,
      planted: [{ kind: 'gitlab-pat', value: v }],
    };
  },
  (g) => {
    const v = 'hf_' + g.token(B62, 34);
    return {
      text: `huggingface-cli login --token ${v}`,
      planted: [{ kind: 'huggingface-token', value: v }],
    };
  },
  (g) => {
    const v = `SG.${g.token(B64URL, 22)}.${g.token(B64URL, 43)}`;
    return {
      text: `"sendgrid": { "apiKey": "${v}", "from": "noreply@example.com" }`,
      planted: [{ kind: 'sendgrid-api-key', value: v }],
    };
  },
  (g) => {
    const v = g.token(B62, 32);
    return {
      text: `const client = new Client({ url: "https://api.example.com", token: "${v}" });`,
      planted: [{ kind: 'generic-token (code)', value: v }],
    };
  },
  (g) => {
    const v = g.token(B62 + '_-', 48);
    return {
      text: `{"client_id": "${g.uuid()}", "client_secret": "${v}", "redirect_uri": "http://localhost:8080/callback"}`,
      planted: [{ kind: 'generic-secret (JSON)', value: v }],
    };
  },
];

// ---------------------------------------------------------------------------------------------------------
// Content pieces

function codeBlock(g: Gen, lang = g.pick(['ts', 'ts', 'py', 'go'])): string {
  const lines: string[] = [];
  const n = g.int(6, 40);
  for (let i = 0; i < n; i++) {
    const id = g.ident();
    lines.push(
      g.pick([
        () =>
          `  const ${id} = await ${g.ident()}.${g.pick(['get', 'put', 'list', 'parse', 'load'])}(${g.ident()}, { limit: ${g.int(1, 1000)} });`,
        () =>
          `  if (!${id}) throw new Error(\`${g.pick(WORDS)} ${g.pick(WORDS)} not found: \${${g.ident()}}\`);`,
        () => `  // ${g.sentence()}`,
        () =>
          `export function ${id}(${g.ident()}: string, options: ${g.pick(['Options', 'Config', 'Record<string, unknown>'])} = {}): ${g.pick(['Promise<void>', 'number', 'string[]', 'boolean'])} {`,
        () =>
          `  return ${g.ident()}.filter((x) => x.${g.ident()} > ${g.int(0, 99)}).map((x) => x.${g.ident()});`,
        () =>
          `  const apiKey = process.env.${g.pick(['OPENAI_API_KEY', 'STRIPE_SECRET_KEY', 'API_TOKEN'])};`,
        () =>
          `  const { max_tokens = ${g.pick([256, 1024, 4096])}, temperature = 0.${g.int(0, 9)} } = options;`,
        () => `  password: z.string().min(${g.int(8, 16)}),`,
        () => `  }`,
        () => `    ${id}.push({ id: "${g.uuid()}", at: ${g.int(1.7e12, 1.8e12)} });`,
      ])(),
    );
  }
  return '```' + lang + '\n' + lines.join('\n') + '\n```';
}

function stackTrace(g: Gen): string {
  if (g.chance(0.5)) {
    const frames: string[] = [];
    for (let i = 0; i < g.int(4, 14); i++)
      frames.push(
        `    at ${g.ident()}.${g.ident()} (/workspace/${g.path()}:${g.int(1, 900)}:${g.int(1, 80)})`,
      );
    return `${g.pick(['TypeError', 'Error', 'RangeError', 'SyntaxError'])}: Cannot read properties of undefined (reading '${g.ident()}')\n${frames.join('\n')}\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)`;
  }
  const frames: string[] = [];
  for (let i = 0; i < g.int(3, 10); i++)
    frames.push(
      `  File "/workspace/${g.pick(DIRS)}/${g.pick(FILES)}.py", line ${g.int(1, 900)}, in ${g.ident()}\n    ${g.ident()} = ${g.ident()}(${g.ident()}, timeout=${g.int(1, 60)})`,
    );
  return `Traceback (most recent call last):\n${frames.join('\n')}\n${g.pick(['KeyError', 'ValueError', 'TimeoutError', 'AttributeError'])}: '${g.ident()}'`;
}

function testOutput(g: Gen): string {
  const lines: string[] = [
    `> ${g.pick(['vitest run', 'jest --ci', 'pytest -q', 'go test ./...'])}`,
    '',
  ];
  const files = g.int(4, 20);
  for (let i = 0; i < files; i++) {
    const ok = g.chance(0.85);
    lines.push(` ${ok ? '✓' : '×'} ${g.path()} (${g.int(1, 40)} tests) ${g.int(3, 2000)}ms`);
    if (!ok)
      lines.push(
        `   × ${g.sentence()}\n     AssertionError: expected ${g.int(0, 100)} to be ${g.int(0, 100)}\n     ❯ ${g.path()}:${g.int(1, 300)}:${g.int(1, 40)}`,
      );
  }
  lines.push(
    '',
    ` Test Files  ${g.int(0, 3)} failed | ${files} passed (${files})`,
    `      Tests  ${g.int(0, 5)} failed | ${g.int(40, 400)} passed`,
    `   Duration  ${g.int(1, 30)}.${g.int(10, 99)}s`,
  );
  return lines.join('\n');
}

function gitDiff(g: Gen): string {
  const file = g.path();
  const lines = [
    `diff --git a/${file} b/${file}`,
    `index ${g.short()}..${g.short()} 100644`,
    `--- a/${file}`,
    `+++ b/${file}`,
  ];
  for (let h = 0; h < g.int(1, 4); h++) {
    lines.push(
      `@@ -${g.int(1, 400)},${g.int(3, 12)} +${g.int(1, 400)},${g.int(3, 12)} @@ export function ${g.ident()}(`,
    );
    for (let i = 0; i < g.int(3, 14); i++)
      lines.push(g.pick([' ', ' ', '-', '+']) + codeBlock(g).split('\n')[1]);
  }
  return lines.join('\n');
}

function gitLog(g: Gen): string {
  const out: string[] = [];
  for (let i = 0; i < g.int(5, 20); i++)
    out.push(
      `commit ${g.sha()}\nAuthor: ${g.pick(['Ana', 'Bo', 'Chen', 'Dee'])} <${g.pick(['ana', 'bo', 'chen', 'dee'])}@example.com>\nDate:   ${g.iso()}\n\n    ${g.sentence()}\n`,
    );
  return out.join('\n');
}

function npmInstall(g: Gen): string {
  const out: string[] = [];
  for (let i = 0; i < g.int(3, 15); i++)
    out.push(
      `npm http fetch GET 200 https://registry.npmjs.org/${g.pick(PACKAGES)}/-/${g.pick(FILES)}-${g.int(1, 9)}.${g.int(0, 20)}.${g.int(0, 9)}.tgz ${g.int(5, 900)}ms (cache miss)`,
    );
  out.push(`"integrity": "sha512-${g.chars(B64, 86)}=="`);
  out.push(
    `added ${g.int(10, 900)} packages, and audited ${g.int(900, 1500)} packages in ${g.int(2, 40)}s`,
    `found 0 vulnerabilities`,
  );
  return out.join('\n');
}

function apiJson(g: Gen): string {
  const items = Array.from({ length: g.int(2, 12) }, () => ({
    id: g.uuid(),
    object: g.pick(['invoice', 'user', 'order', 'event']),
    created_at: g.iso(),
    amount: g.int(100, 999999),
    currency: g.pick(['eur', 'usd', 'jpy']),
    status: g.pick(['paid', 'open', 'void', 'draft']),
    url: g.url(),
    metadata: {
      tenant: g.pick(REPOS),
      request_id: g.uuid(),
      token_count: g.int(10, 9000),
      commit: g.sha(),
    },
  }));
  return JSON.stringify(
    {
      data: items,
      has_more: g.chance(0.5),
      next_cursor: g.chars(B64URL, 24),
      usage: { prompt_tokens: g.int(100, 9000), completion_tokens: g.int(10, 2000) },
    },
    null,
    g.pick([0, 2]),
  );
}

function appLogs(g: Gen): string {
  const out: string[] = [];
  for (let i = 0; i < g.int(5, 40); i++) {
    out.push(
      `${g.iso()} ${g.pick(['INFO', 'INFO', 'INFO', 'WARN', 'DEBUG', 'ERROR'])} [${g.pick(IDENTS)}] ${g.pick(
        [
          () =>
            `request_id=${g.uuid()} method=${g.pick(['GET', 'POST', 'PUT'])} path=/v1/${g.pick(IDENTS)}s/${g.uuid()} status=${g.pick([200, 200, 201, 204, 404, 412, 500])} duration_ms=${g.int(1, 900)}`,
          () => g.sentence(),
          () => `retrying in ${g.int(10, 5000)} ms (attempt ${g.int(1, 5)}/5): ECONNRESET`,
          () =>
            `cache hit ratio=${g.r().toFixed(3)} size=${g.int(1, 900)}MiB evictions=${g.int(0, 90)}`,
          () => `pulled image sha256:${g.chars(HEX, 64)}`,
        ],
      )()}`,
    );
  }
  return out.join('\n');
}

function fileListing(g: Gen): string {
  const out = [`total ${g.int(8, 400)}`];
  for (let i = 0; i < g.int(5, 30); i++)
    out.push(
      `-rw-r--r--  1 dev dev ${String(g.int(10, 99999)).padStart(6)} Nov ${g.int(1, 30)} ${g.int(10, 23)}:${g.int(10, 59)} ${g.pick(FILES)}.${g.pick(['ts', 'json', 'md', 'py'])}`,
    );
  return out.join('\n');
}

function fileContent(g: Gen): string {
  const parts: string[] = [
    `// ${g.path()}`,
    `import { ${g.ident()}, ${g.ident()} } from '${g.pick(PACKAGES)}';`,
    '',
  ];
  for (let i = 0; i < g.int(2, 6); i++)
    parts.push(codeBlock(g, 'ts').replace(/^```ts\n|\n```$/g, ''));
  return parts.join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// Transcript

export interface Transcript {
  messages: Message[];
  planted: Planted[];
  /** UTF-8 bytes of JSON.stringify(messages). */
  bytes: number;
}

const encoder = new TextEncoder();
const jsonSize = (v: unknown) => encoder.encode(JSON.stringify(v)).byteLength;

/**
 * Messages whose JSON array takes at least `bytes` bytes: a system prompt, then turns of user request,
 * 1-5 rounds of assistant tool calls and results, and an assistant answer.
 */
export function transcript(bytes: number, seed: number, secretEvery = 50_000): Transcript {
  const g = new Gen(seed);
  const planted: Planted[] = [];
  /** Planted but not yet in a pushed message. */
  let pending: Planted[] = [];
  const messages: Message[] = [{ role: 'system', content: systemPrompt(g) }];
  let size = 2 + jsonSize(messages[0]);
  let untilSecret = g.int(secretEvery / 2, (secretEvery * 3) / 2);
  /** Appends a fake secret to a piece of content when one is due. */
  const maybeSecret = (text: string): string => {
    if (untilSecret > 0) return text;
    untilSecret = g.int(secretEvery / 2, (secretEvery * 3) / 2);
    const s = g.pick(SECRETS)(g);
    pending.push(...s.planted);
    return `${text}\n${s.text}\n`;
  };
  const push = (m: Message) => {
    if (pending.length > 0) {
      const json = JSON.stringify(m);
      for (const p of pending)
        if (json.includes(p.value)) planted.push({ ...p, message: messages.length });
      pending = pending.filter((p) => !json.includes(p.value));
    }
    const n = jsonSize(m) + 1;
    size += n;
    untilSecret -= n;
    messages.push(m);
  };
  let turn = 0;
  let call = 0;
  while (size < bytes) {
    turn++;
    let user = g.chance(0.3) ? g.prose(g.int(1, 3)) : `${g.prose(g.int(1, 4))} See ${g.url()}`;
    if (g.chance(0.2)) user += '\n\n' + g.pick([stackTrace, appLogs, codeBlock])(g);
    push({ role: 'user', content: maybeSecret(user) });
    for (let round = 0, rounds = g.int(1, 5); round < rounds && size < bytes; round++) {
      const calls = g.int(1, g.chance(0.2) ? 3 : 1);
      const toolCalls: NonNullable<Message['tool_calls']> = [];
      const results: Message[] = [];
      for (let c = 0; c < calls; c++) {
        const id = `call_${(++call).toString(36)}${g.chars(B62, 20)}`;
        const kind = g.pick([
          'shell',
          'shell',
          'shell',
          'read_file',
          'read_file',
          'edit_file',
          'grep',
          'http_request',
          'web_search',
          'list_dir',
        ]);
        let args: Record<string, unknown>;
        let result: string;
        switch (kind) {
          case 'shell': {
            const [cmd, out] = g.pick<[string, () => string]>([
              ['npm test', () => testOutput(g)],
              ['npx vitest run --reporter=dot', () => testOutput(g)],
              ['git log -n 10', () => gitLog(g)],
              ['git diff HEAD~1', () => gitDiff(g)],
              ['npm install', () => npmInstall(g)],
              [`tail -n 200 /var/log/${g.pick(REPOS)}/app.log`, () => appLogs(g)],
              ['ls -la', () => fileListing(g)],
              [`node scripts/${g.pick(FILES)}.js`, () => stackTrace(g)],
              [
                `cat .env.example`,
                () =>
                  `API_URL=https://api.example.com\nAPI_TOKEN=\${API_TOKEN}\nDB_PASSWORD=<your-password>\nSECRET_KEY=changeme\nMAX_TOKENS=4096`,
              ],
            ]);
            args = {
              command: cmd,
              timeout_ms: g.pick([30000, 120000]),
              cwd: `/workspace/${g.pick(REPOS)}`,
            };
            result = `${out()}\n\nexit status ${g.pick([0, 0, 0, 1])}`;
            break;
          }
          case 'read_file':
            args = { path: g.path(), offset: g.int(0, 400), limit: g.pick([200, 400, 2000]) };
            result = fileContent(g);
            break;
          case 'edit_file': {
            const block = codeBlock(g, 'ts').replace(/^```ts\n|\n```$/g, '');
            args = {
              path: g.path(),
              old_str: block.split('\n').slice(0, 3).join('\n'),
              new_str: block,
            };
            result = `Edited ${g.path()}: ${g.int(1, 40)} lines changed.\n${gitDiff(g)}`;
            break;
          }
          case 'grep':
            args = { pattern: g.ident(), path: g.pick(DIRS), include: '*.ts' };
            result = Array.from(
              { length: g.int(2, 30) },
              () => `${g.path()}:${g.int(1, 900)}:  ${codeBlock(g).split('\n')[1]}`,
            ).join('\n');
            break;
          case 'http_request':
            args = {
              method: 'GET',
              url: g.url(),
              headers: { accept: 'application/json', 'x-request-id': g.uuid() },
            };
            result = apiJson(g);
            break;
          case 'web_search':
            args = {
              query: `${g.pick(WORDS)} ${g.pick(WORDS)} ${g.pick(PACKAGES)} ${g.pick(['error', 'docs', 'example'])}`,
              max_results: 5,
            };
            result = Array.from(
              { length: 5 },
              () => `- ${g.sentence()}\n  ${g.url()}\n  ${g.prose(2)}`,
            ).join('\n');
            break;
          default:
            args = { path: g.pick(DIRS) };
            result = fileListing(g);
        }
        let argText = JSON.stringify(args);
        if (kind === 'shell' && untilSecret <= 0 && g.chance(0.3)) {
          // A secret inside the tool-call arguments (a command line), not in the result.
          const s = g.pick(SECRETS)(g);
          untilSecret = g.int(secretEvery / 2, (secretEvery * 3) / 2);
          pending.push(...s.planted);
          argText = JSON.stringify({
            ...args,
            command: `${args.command} && ${s.text.replace(/\n/g, ' && ')}`,
          });
        }
        toolCalls.push({ id, type: 'function', function: { name: kind, arguments: argText } });
        results.push({ role: 'tool', tool_call_id: id, content: maybeSecret(result) });
      }
      const thinking = g.prose(g.int(1, 4));
      push({
        role: 'assistant',
        content: g.chance(0.5) ? g.prose(g.int(1, 2)) : '',
        ...(g.chance(0.4) ? { reasoning_content: thinking } : {}),
        tool_calls: toolCalls,
      });
      for (const r of results) push(r);
    }
    let answer = g.prose(g.int(2, 8));
    if (g.chance(0.5)) answer += '\n\n' + codeBlock(g) + '\n\n' + g.prose(g.int(1, 3));
    push({ role: 'assistant', content: maybeSecret(answer) });
  }
  return { messages, planted, bytes: jsonSize(messages) };
}

/** One new message of about `bytes` bytes (for appends); every `secretEvery`th one carries a fake secret. */
export function appendMessages(
  count: number,
  seed: number,
  bytes = 500,
  secretEvery = 10,
): Message[] {
  const g = new Gen(seed);
  const out: Message[] = [];
  for (let i = 0; i < count; i++) {
    const role = g.pick(['user', 'assistant', 'tool'] as const);
    let content = '';
    while (content.length < bytes - 60) content += (content ? ' ' : '') + g.sentence();
    content = content.slice(0, bytes - 60);
    if (i % secretEvery === secretEvery - 1)
      content = content.slice(0, bytes - 200) + '\n' + g.pick(SECRETS)(g).text.slice(0, 180);
    out.push(
      role === 'tool'
        ? { role, tool_call_id: `call_${g.chars(B62, 20)}`, content }
        : { role, content },
    );
  }
  return out;
}
