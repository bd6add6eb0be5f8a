/**
 * A seeded corpus of fake secrets and hard near-misses for measuring the redactor
 * (test/pipeline/corpus.test.ts, bench/eval-redaction.ts). Every value is generated from the PRNG in the exact shape of its format (prefix,
 * length, alphabet, checksum where the format has one); none is copied from anywhere, except the documented
 * example keys among the near-misses, which are public on purpose. Each value is placed in realistic contexts:
 * shell sessions, .env, YAML, JSON, TOML, INI, XML, HTTP dumps, connection strings, log lines, stack traces,
 * JSON tool arguments.
 */
import { mulberry32 } from './prng.js';

/** One text holding real-format secrets: every string of `secrets` must be gone after redaction. */
export interface PositiveCase {
  kind: string;
  context: string;
  text: string;
  secrets: string[];
}

/** One text holding no secret: it must come back unchanged. */
export interface NearMissCase {
  kind: string;
  context: string;
  text: string;
}

export interface SecretCorpus {
  positives: PositiveCase[];
  nearMisses: NearMissCase[];
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const B62 = UPPER + LOWER + DIGITS;
const B64 = B62 + '+/';
const B64URL = B62 + '-_';
const HEX = '0123456789abcdef';
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const UPPER_NUM = UPPER + DIGITS;
const LOWER_NUM = LOWER + DIGITS;
const SYMBOLS = '!#%*+,-.:=?@[]^_{}~';

/** Seeded random values in the shapes token formats use. */
class Gen {
  private readonly r: () => number;
  constructor(seed: number) {
    this.r = mulberry32(seed);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.r() * items.length)]!;
  }
  /** `n` characters of `alphabet`, with a digit when the alphabet has one (random tokens almost always do). */
  chars(alphabet: string, n: number): string {
    for (;;) {
      let s = '';
      for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.r() * alphabet.length)];
      if (n < 12 || !/[0-9]/.test(alphabet) || /[0-9]/.test(s)) return s;
    }
  }
  digits(n: number): string {
    return String(this.int(1, 9)) + this.chars(DIGITS, n - 1);
  }
  iso8601(): string {
    return new Date(
      Date.UTC(2026, this.int(0, 11), this.int(1, 28), this.int(0, 23)),
    ).toISOString();
  }
  uuid(): string {
    const h = (n: number) => this.chars(HEX, n);
    return `${h(8)}-${h(4)}-4${h(3)}-${this.pick(['8', '9', 'a', 'b'])}${h(3)}-${h(12)}`;
  }
  bytes(n: number): Buffer {
    return Buffer.from(Array.from({ length: n }, () => this.int(0, 255)));
  }
  b64Bytes(n: number): string {
    return this.bytes(n).toString('base64');
  }
  /** A password people type: letters, digits and symbols (never a quote, a backslash or a blank). */
  password(symbols = SYMBOLS): string {
    const head = this.chars(B62, this.int(4, 8)) + this.chars(symbols, 2);
    return head + this.chars(B62, this.int(3, 6)) + this.chars(symbols, 1) + this.chars(DIGITS, 2);
  }
}

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url');
/** CRC32 (IEEE), for formats that end in a checksum (GitHub tokens). */
function crc32(s: string): number {
  let c = ~0;
  for (let i = 0; i < s.length; i++) {
    c ^= s.charCodeAt(i);
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
/** Base62 of a number, left-padded to `width`. */
function base62(n: number, width: number): string {
  let s = '';
  for (let x = n; x > 0; x = Math.floor(x / 62)) s = B62[x % 62]! + s;
  return s.padStart(width, '0');
}
/** A GitHub (or npm) token: prefix, 30 random base62 characters, then their CRC32 in 6 base62 characters. */
function githubToken(g: Gen, prefix: string): string {
  const body = g.chars(B62, 30);
  return `${prefix}${body}${base62(crc32(body), 6)}`;
}
/** Bech32 (BIP 173) of `bytes` under `hrp`, with its 6-character checksum: the format of age keys. */
function bech32(hrp: string, bytes: Buffer): string {
  const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
  const words: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) words.push((acc >> (bits -= 5)) & 31);
  }
  if (bits > 0) words.push((acc << (5 - bits)) & 31);
  const polymod = (values: number[]) => {
    const GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
    let chk = 1;
    for (const v of values) {
      const top = chk >> 25;
      chk = ((chk & 0x1ffffff) << 5) ^ v;
      for (let i = 0; i < 5; i++) if ((top >> i) & 1) chk ^= GEN[i]!;
    }
    return chk;
  };
  const codes = [...hrp].map((ch) => ch.charCodeAt(0));
  const expanded = [...codes.map((x) => x >> 5), 0, ...codes.map((x) => x & 31)];
  const mod = polymod([...expanded, ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => CHARSET[w]).join('')}`;
}
function pemBlock(g: Gen, label: string, sep = '\n', lines = 6): string {
  const body = Array.from({ length: lines }, () => g.b64Bytes(48)).join(sep);
  return `-----BEGIN ${label}-----${sep}${body}${sep}${g.b64Bytes(20)}${sep}-----END ${label}-----`;
}
function jwt(g: Gen): string {
  const header = b64url(JSON.stringify({ alg: g.pick(['HS256', 'RS256', 'ES256']), typ: 'JWT' }));
  const claims = { sub: g.uuid(), iat: 1_760_000_000 + g.int(0, 1e7), scope: 'read write' };
  const payload = b64url(JSON.stringify(claims));
  return `${header}.${payload}.${b64url(g.bytes(32))}`;
}

// ---------------------------------------------------------------------------------------------------------
// Contexts: where a `NAME=value` pair, or a bare value, shows up in an agent's transcript.
// ---------------------------------------------------------------------------------------------------------

const camel = (name: string) =>
  name.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const snake = (name: string) => name.toLowerCase();

type Place = (name: string, value: string, g: Gen) => string;

/** Contexts that carry the variable's name: enough for a keyed secret (the value alone looks like noise). */
const NAMED: Record<string, Place> = {
  dotenv: (n, v) => `# production\nNODE_ENV=production\n${n}=${v}\nLOG_LEVEL=info`,
  'dotenv-quoted': (n, v) => `${n}="${v}"\nPORT=8080`,
  'shell-export': (n, v) => `$ export ${n}=${v}\n$ npm run deploy\n> deploy@1.0.0 deploy`,
  yaml: (n, v) => `service:\n  name: billing\n  ${snake(n)}: ${v}\n  retries: 3`,
  'yaml-quoted': (n, v) => `env:\n  ${n}: "${v}"\n  REGION: eu-west-1`,
  json: (n, v) => `{"service": "billing", "${camel(n)}": "${v}", "timeout": 30}`,
  toml: (n, v) => `[service]\nname = "billing"\n${snake(n)} = "${v}"\n`,
  ini: (n, v) => `[default]\nregion = eu-west-1\n${snake(n)} = ${v}\n`,
  log: (n, v, g) =>
    `2026-03-0${g.int(1, 9)}T10:22:31.123Z INFO  [worker-${g.int(1, 9)}] loaded ${n}=${v} from environment`,
  'stack-trace': (n, v) =>
    `Error: request failed with status 401\n    at fetch (/app/src/client.ts:42:11)\n    at async main (/app/src/index.ts:9:3) {\n` +
    `  config: { url: 'https://api.example.com/v1', ${camel(n)}: '${v}' }\n}`,
  docker: (n, v) => `$ docker run --rm -e ${n}=${v} -p 8080:8080 ghcr.io/acme/app:1.4.2`,
  'tool-args': (n, v) =>
    JSON.stringify({ command: `${n}=${v} ./scripts/migrate.sh --dry-run`, timeout: 60 }),
  python: (n, v) => `import os\n${snake(n)} = "${v}"\nclient = connect(${snake(n)}=${snake(n)})`,
};

/** Contexts for values whose format alone says they are secrets. */
const BARE: Record<string, Place> = {
  prose: (_n, v) => `I rotated it; the new one is ${v} — please update CI before Friday.`,
  'http-bearer': (_n, v) =>
    `GET /v1/items HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer ${v}\r\nAccept: */*\r\n`,
  'curl-header': (_n, v) =>
    `$ curl -sS https://api.example.com/v1/me -H "Authorization: Bearer ${v}" | jq .`,
  'tool-result': (_n, v) =>
    JSON.stringify({ stdout: `created credential\nvalue: ${v}\n`, exit_code: 0 }),
  markdown: (_n, v) => `Set the secret in the repository settings:\n\n\`\`\`\n${v}\n\`\`\`\n`,
  'k8s-env': (n, v) =>
    `        env:\n        - name: ${n}\n          value: "${v}"\n        - name: PORT\n          value: "8080"`,
};

// ---------------------------------------------------------------------------------------------------------
// Kinds. `bare: true`: the format is distinctive enough to be found without its name.
// ---------------------------------------------------------------------------------------------------------

interface Kind {
  kind: string;
  names: string[];
  value: (g: Gen) => string;
  bare?: boolean;
  /** Contexts of its own: each returns the text and the secrets in it. */
  custom?: ((g: Gen) => { context: string; text: string; secrets: string[] })[];
  /** Only these named contexts (e.g. values with characters YAML or TOML would quote differently). */
  only?: string[];
  /**
   * Its own PRNG stream (the corpus seed XOR this number), not the shared one: a kind added later leaves
   * the values of every other case as they were.
   */
  stream?: number;
}

const kinds: Kind[] = [];
type Value = (g: Gen) => string;
const token = (kind: string, names: string[], value: Value) =>
  kinds.push({ kind, names, value, bare: true });
const keyed = (kind: string, names: string[], value: Value) => kinds.push({ kind, names, value });
const custom = (kind: string, ...places: Kind['custom'] & {}) =>
  kinds.push({ kind, names: [], value: () => '', custom: places });
/** A custom kind on its own PRNG stream (Kind.stream). */
const customOwn = (kind: string, stream: number, ...places: Kind['custom'] & {}) =>
  kinds.push({ kind, names: [], value: () => '', custom: places, stream });
const c = (context: string, text: string, ...secrets: string[]) => ({ context, text, secrets });

// AI providers
token(
  'openai-project-key',
  ['OPENAI_API_KEY'],
  (g) => `sk-proj-${g.chars(B64URL, 74)}T3BlbkFJ${g.chars(B64URL, 74)}`,
);
token(
  'openai-service-account-key',
  ['OPENAI_API_KEY'],
  (g) => `sk-svcacct-${g.chars(B64URL, 74)}T3BlbkFJ${g.chars(B64URL, 74)}`,
);
token(
  'openai-admin-key',
  ['OPENAI_ADMIN_KEY'],
  (g) => `sk-admin-${g.chars(B64URL, 74)}T3BlbkFJ${g.chars(B64URL, 74)}`,
);
token(
  'openai-legacy-key',
  ['OPENAI_API_KEY'],
  (g) => `sk-${g.chars(B62, 20)}T3BlbkFJ${g.chars(B62, 20)}`,
);
token('anthropic-api-key', ['ANTHROPIC_API_KEY'], (g) => `sk-ant-api03-${g.chars(B64URL, 93)}AA`);
token(
  'anthropic-admin-key',
  ['ANTHROPIC_ADMIN_KEY'],
  (g) => `sk-ant-admin01-${g.chars(B64URL, 93)}AA`,
);
token('groq-api-key', ['GROQ_API_KEY'], (g) => `gsk_${g.chars(B62, 52)}`);
token('xai-api-key', ['XAI_API_KEY'], (g) => `xai-${g.chars(B62, 80)}`);
token('openrouter-api-key', ['OPENROUTER_API_KEY'], (g) => `sk-or-v1-${g.chars(HEX, 64)}`);
token('huggingface-token', ['HF_TOKEN'], (g) => `hf_${g.chars(UPPER + LOWER, 34)}`);
token('replicate-api-token', ['REPLICATE_API_TOKEN'], (g) => `r8_${g.chars(B62, 37)}`);
token('perplexity-api-key', ['PERPLEXITY_API_KEY'], (g) => `pplx-${g.chars(B62, 48)}`);
token(
  'langsmith-api-key',
  ['LANGSMITH_API_KEY'],
  (g) => `lsv2_${g.pick(['pt', 'sk'])}_${g.chars(HEX, 32)}_${g.chars(HEX, 10)}`,
);
token(
  'pinecone-api-key',
  ['PINECONE_API_KEY'],
  (g) => `pcsk_${g.chars(B62, 6)}_${g.chars(B62, 63)}`,
);
token('deepseek-api-key', ['DEEPSEEK_API_KEY'], (g) => `sk-${g.chars(HEX, 32)}`);
token('elevenlabs-api-key', ['ELEVENLABS_API_KEY'], (g) => `sk_${g.chars(HEX, 48)}`);
token('langfuse-secret-key', ['LANGFUSE_SECRET_KEY'], (g) => `sk-lf-${g.uuid()}`);
keyed('cohere-api-key', ['COHERE_API_KEY', 'CO_API_KEY'], (g) => g.chars(B62, 40));
keyed('mistral-api-key', ['MISTRAL_API_KEY'], (g) => g.chars(B62, 32));
keyed('wandb-api-key', ['WANDB_API_KEY'], (g) => g.chars(HEX, 40));
keyed('voyage-api-key', ['VOYAGE_API_KEY'], (g) => `pa-${g.chars(B64URL, 43)}`);
keyed('fireworks-api-key', ['FIREWORKS_API_KEY'], (g) => `fw_${g.chars(B62, 24)}`);

// Cloud
token(
  'aws-access-key-id',
  ['AWS_ACCESS_KEY_ID'],
  (g) => `${g.pick(['AKIA', 'ASIA'])}${g.chars(BASE32, 16)}`,
);
keyed('aws-secret-access-key', ['AWS_SECRET_ACCESS_KEY'], (g) => g.chars(B64, 40));
token(
  'aws-session-token',
  ['AWS_SESSION_TOKEN'],
  (g) => `IQoJb3JpZ2luX2Vj${g.chars(B64, g.int(300, 900))}`,
);
kinds.push({
  kind: 'aws-session-token-legacy',
  names: ['AWS_SECURITY_TOKEN', 'AWS_SESSION_TOKEN'],
  value: (g) => `FwoGZXIvYXdz${g.chars(B64, 340)}`,
});
custom(
  'aws-credentials-file',
  (g) => {
    const [a, s, t] = [
      `ASIA${g.chars(BASE32, 16)}`,
      g.chars(B64, 40),
      `IQoJb3JpZ2luX2Vj${g.chars(B64, 500)}`,
    ];
    return c(
      'ini',
      `[prod]\n` +
        `aws_access_key_id = ${a}\n` +
        `aws_secret_access_key = ${s}\n` +
        `aws_session_token = ${t}\n`,
      a,
      s,
      t,
    );
  },
  (g) => {
    const [s, t] = [g.chars(B64, 40), `IQoJb3JpZ2luX2Vj${g.chars(B64, 600)}`];
    const json = {
      Credentials: {
        AccessKeyId: `ASIA${g.chars(BASE32, 16)}`,
        SecretAccessKey: s,
        SessionToken: t,
        Expiration: '2026-03-04T11:22:33Z',
      },
    };
    return c(
      'sts-json',
      `$ aws sts assume-role --role-arn arn:aws:iam::123456789012:role/deploy --role-session-name ` +
        `ci\n` +
        `${JSON.stringify(json, null, 4)}`,
      s,
      t,
    );
  },
);
customOwn(
  // Blanks alone between the name and the value (review s52f: the rules needed `=` or `:`).
  'aws-cli-configure-set',
  0x5a52,
  (g) => {
    const s = g.chars(B64, 40);
    const command = `aws configure set aws_secret_access_key ${s} --profile ci`;
    return c('tool-args', JSON.stringify({ command, timeout: 30 }), s);
  },
  (g) => {
    const [a, s, t] = [
      `ASIA${g.chars(BASE32, 16)}`,
      g.chars(B64, 40),
      `AQoDYXdzE${g.chars(B64, g.int(200, 400))}`,
    ];
    return c(
      'shell',
      `$ aws configure set aws_access_key_id ${a}\n` +
        `$ aws configure set aws_secret_access_key ${s}\n` +
        `$ aws configure set aws_session_token ${t}\n` +
        `$ aws sts get-caller-identity`,
      a,
      s,
      t,
    );
  },
  (g) => {
    const s = g.chars(B64, 40);
    return c('shell', `$ aws configure set profile.ci.aws_secret_access_key "${s}"`, s);
  },
  (g) => {
    const s = g.chars(B64, 40);
    return c(
      'shell',
      `$ rclone config create backup s3 provider AWS access_key_id AKIA${g.chars(BASE32, 16)} ` +
        `secret_access_key ${s} region eu-west-1`,
      s,
    );
  },
);
custom(
  'aws-sigv4-signature',
  (g) => {
    const sig = g.chars(HEX, 64);
    const t =
      `Authorization: AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20260101/us-east-1/s3/aws4_request, ` +
      `SignedHeaders=host;x-amz-date, Signature=${sig}`;
    return c('http', t, sig);
  },
  (g) => {
    const sig = g.chars(HEX, 64);
    const t = `https://bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600&X-Amz-Signature=${sig}`;
    return c('presigned-url', t, sig);
  },
);
token('google-api-key', ['GOOGLE_API_KEY', 'GEMINI_API_KEY'], (g) => `AIza${g.chars(B64URL, 35)}`);
token(
  'google-oauth-access-token',
  ['GOOGLE_ACCESS_TOKEN'],
  (g) => `ya29.a0${g.chars(B64URL, 150)}`,
);
token(
  'google-oauth-client-secret',
  ['GOOGLE_CLIENT_SECRET'],
  (g) => `GOCSPX-${g.chars(B64URL, 28)}`,
);
token('google-oauth-refresh-token', ['GOOGLE_REFRESH_TOKEN'], (g) => `1//0${g.chars(B64URL, 100)}`);
custom('gcp-service-account-key', (g) => {
  const key = pemBlock(g, 'PRIVATE KEY', '\\n', 10);
  const t =
    `{\n` +
    `  "type": "service_account",\n` +
    `  "project_id": "acme-prod",\n` +
    `  "private_key_id": "${g.chars(HEX, 40)}",\n` +
    `  "private_key": "${key}\\n` +
    `",\n` +
    `  "client_email": "ci@acme-prod.iam.gserviceaccount.com"\n` +
    `}`;
  return c('json', t, key.slice(0, 80), key.slice(-120));
});
token(
  'firebase-fcm-server-key',
  ['FCM_SERVER_KEY'],
  (g) => `AAAA${g.chars(B64URL, 7)}:APA91b${g.chars(B64URL, 134)}`,
);
const azureKey = (g: Gen) => g.b64Bytes(64);
custom(
  'azure-storage-account-key',
  (g) => {
    const k = azureKey(g);
    return c(
      'connection-string',
      `AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=acmedata;AccountKey=${k};EndpointSuffix=core.windows.net"`,
      k,
    );
  },
  (g) => {
    const k = azureKey(g);
    return c('dotenv', `AZURE_STORAGE_ACCOUNT=acmedata\nAZURE_STORAGE_KEY=${k}\n`, k);
  },
  (g) => {
    const k = azureKey(g);
    return c('dotenv', `AZURE_STORAGE_ACCOUNT_KEY=${k}\n`, k);
  },
  (g) => {
    const k = azureKey(g);
    return c(
      'cli-flag',
      `$ az storage blob upload --account-name acmedata --account-key ${k} -c logs ` +
        `-f app.log -n app.log`,
      k,
    );
  },
  (g) => {
    const [k1, k2] = [azureKey(g), azureKey(g)];
    const out = JSON.stringify(
      [
        { creationTime: '2026-01-02T03:04:05Z', keyName: 'key1', permissions: 'FULL', value: k1 },
        { creationTime: '2026-01-02T03:04:05Z', keyName: 'key2', permissions: 'FULL', value: k2 },
      ],
      null,
      2,
    );
    return c('cli-json', `$ az storage account keys list -g rg -n acmedata\n${out}`, k1, k2);
  },
  (g) => {
    const k = azureKey(g);
    return c('json', `{"storageAccountName": "acmedata", "storageAccountKey": "${k}"}`, k);
  },
  (g) => {
    const k = azureKey(g);
    return c(
      'terraform',
      `resource "x" "y" {\n` +
        `  storage_account_name = "acmedata"\n` +
        `  storage_account_access_key = "${k}"\n` +
        `}`,
      k,
    );
  },
  (g) => {
    const k = azureKey(g);
    return c('yaml', `storage:\n  account: acmedata\n  accountKey: ${k}\n`, k);
  },
  (g) => {
    const sig = g.b64Bytes(32);
    return c(
      'http',
      `PUT /logs/app.log HTTP/1.1\r\n` +
        `x-ms-version: 2021-08-06\r\n` +
        `Authorization: SharedKey acmedata:${sig}\r\n`,
      sig,
    );
  },
  (g) => {
    const k = azureKey(g);
    return c(
      'cosmos',
      `COSMOS_CONNECTION=AccountEndpoint=https://acme.documents.azure.com:443/;AccountKey=${k};`,
      k,
    );
  },
);
custom('azure-sas-token', (g) => {
  const sig = encodeURIComponent(g.b64Bytes(32));
  return c(
    'url',
    `https://acmedata.blob.core.windows.net/logs/app.log?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-04-01T00:00:00Z&sig=${sig}`,
    sig,
  );
});
token(
  'azure-servicebus-key',
  ['SERVICEBUS_KEY'],
  (g) =>
    `Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${g.b64Bytes(32)}`,
);
token(
  'azure-ad-client-secret',
  ['AZURE_CLIENT_SECRET'],
  (g) => `${g.chars(B62, 3)}${g.int(7, 8)}Q~${g.chars(B62 + '_~.-', 31)}${g.chars(B62, 3)}`,
);
keyed('azure-devops-pat', ['AZURE_DEVOPS_PAT', 'AZURE_DEVOPS_EXT_PAT'], (g) =>
  g.chars('abcdefghijklmnopqrstuvwxyz234567', 52),
);
custom(
  'azure-function-key',
  (g) => {
    const k = `${g.chars(B64URL, 54)}==`;
    return c(
      'curl-header',
      `$ curl -X POST https://acme-fn.azurewebsites.net/api/ingest -H "x-functions-key: ` +
        `${k}" -d @event.json`,
      k,
    );
  },
  (g) => {
    const k = `${g.chars(B64URL, 54)}==`;
    return c('url', `https://acme-fn.azurewebsites.net/api/ingest?code=${k}`, k);
  },
);
custom(
  'azure-openai-api-key',
  (g) => {
    const k = g.chars(HEX, 32);
    return c(
      'curl-header',
      `$ curl https://acme.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-06-01 ` +
        `-H "api-key: ${k}"`,
      k,
    );
  },
  (g) => {
    const k = g.chars(B62, 84);
    return c(
      'http',
      `POST /openai/deployments/gpt4o/chat/completions HTTP/1.1\r\n` +
        `Host: acme.openai.azure.com\r\n` +
        `api-key: ${k}\r\n`,
      k,
    );
  },
  (g) => {
    const k = g.chars(HEX, 32);
    return c('http', `Ocp-Apim-Subscription-Key: ${k}\r\nContent-Type: application/json\r\n`, k);
  },
);
token('digitalocean-token', ['DIGITALOCEAN_TOKEN'], (g) => `dop_v1_${g.chars(HEX, 64)}`);
token('alibaba-access-key-id', ['ALIBABA_CLOUD_ACCESS_KEY_ID'], (g) => `LTAI${g.chars(B62, 20)}`);
token('tencent-secret-id', ['TENCENTCLOUD_SECRET_ID'], (g) => `AKID${g.chars(B62, 32)}`);
keyed('tencent-secret-key', ['TENCENTCLOUD_SECRET_KEY'], (g) => g.chars(B62, 32));
keyed('ibm-cloud-api-key', ['IBMCLOUD_API_KEY', 'IC_API_KEY'], (g) => g.chars(B64URL, 44));
keyed('cloudflare-api-token', ['CLOUDFLARE_API_TOKEN', 'CF_API_TOKEN'], (g) => g.chars(B64URL, 40));
keyed('cloudflare-global-api-key', ['CLOUDFLARE_API_KEY', 'CF_API_KEY'], (g) => g.chars(HEX, 37));
token(
  'cloudflare-origin-ca-key',
  ['CF_ORIGIN_CA_KEY', 'CLOUDFLARE_ORIGIN_CA_KEY'],
  (g) => `v1.0-${g.chars(HEX, 24)}-${g.chars(HEX, 146)}`,
);
token('databricks-token', ['DATABRICKS_TOKEN'], (g) => `dapi${g.chars(HEX, 32)}`);
token('vault-token', ['VAULT_TOKEN'], (g) => `hvs.${g.chars(B64URL, 90)}`);
token(
  'terraform-cloud-token',
  ['TFE_TOKEN'],
  (g) => `${g.chars(B62, 14)}.atlasv1.${g.chars(B64URL, 67)}`,
);
token('pulumi-access-token', ['PULUMI_ACCESS_TOKEN'], (g) => `pul-${g.chars(HEX, 40)}`);
token('flyio-token', ['FLY_API_TOKEN'], (g) => `fo1_${g.chars(B64URL, 43)}`);
token('heroku-api-key', ['HEROKU_API_KEY'], (g) => `HRKU-${g.chars(B64URL, 60)}`);
keyed('heroku-legacy-api-key', ['HEROKU_API_KEY'], (g) => g.uuid());
token('netlify-token', ['NETLIFY_AUTH_TOKEN'], (g) => `nfp_${g.chars(B62, 36)}`);
keyed('vercel-token', ['VERCEL_TOKEN'], (g) => g.chars(B62, 24));
token('supabase-access-token', ['SUPABASE_ACCESS_TOKEN'], (g) => `sbp_${g.chars(HEX, 40)}`);
token('supabase-secret-key', ['SUPABASE_SECRET_KEY'], (g) => `sb_secret_${g.chars(B64URL, 32)}`);
token(
  'planetscale-token',
  ['PLANETSCALE_SERVICE_TOKEN'],
  (g) => `pscale_tkn_${g.chars(B64URL, 43)}`,
);
token(
  'doppler-token',
  ['DOPPLER_TOKEN'],
  (g) => `dp.${g.pick(['pt', 'st.prd', 'sa'])}.${g.chars(B62, 43)}`,
);
token(
  'tailscale-key',
  ['TS_AUTHKEY'],
  (g) => `tskey-auth-k${g.chars(B62, 11)}-${g.chars(B62, 32)}`,
);
token(
  'dynatrace-token',
  ['DT_API_TOKEN'],
  (g) => `dt0c01.${g.chars(UPPER_NUM, 24)}.${g.chars(UPPER_NUM, 64)}`,
);
token('newrelic-key', ['NEW_RELIC_API_KEY'], (g) => `NRAK-${g.chars(UPPER_NUM, 27)}`);
token(
  'onepassword-service-account-token',
  ['OP_SERVICE_ACCOUNT_TOKEN'],
  (g) => `ops_eyJ${g.chars(B64, 300)}`,
);
keyed('linode-token', ['LINODE_TOKEN'], (g) => g.chars(HEX, 64));
token('scaleway-access-key', ['SCW_ACCESS_KEY'], (g) => `SCW${g.chars(UPPER_NUM, 17)}`);
keyed('scaleway-secret-key', ['SCW_SECRET_KEY'], (g) => g.uuid());
keyed('hetzner-token', ['HCLOUD_TOKEN'], (g) => g.chars(B62, 64));
token('render-api-key', ['RENDER_API_KEY'], (g) => `rnd_${g.chars(B62, 32)}`);
keyed('mongodb-atlas-private-key', ['MONGODB_ATLAS_PRIVATE_KEY'], (g) => g.uuid());

// Code hosting, CI, registries
token('github-pat', ['GITHUB_TOKEN', 'GH_TOKEN'], (g) => githubToken(g, 'ghp_'));
token('github-oauth-token', ['GITHUB_OAUTH_TOKEN'], (g) => githubToken(g, 'gho_'));
token('github-app-token', ['GITHUB_TOKEN'], (g) => githubToken(g, g.pick(['ghs_', 'ghu_'])));
token('github-refresh-token', ['GITHUB_REFRESH_TOKEN'], (g) => `ghr_${g.chars(B62, 76)}`);
token(
  'github-fine-grained-pat',
  ['GH_TOKEN'],
  (g) => `github_pat_${g.chars(B62, 22)}_${g.chars(B62, 59)}`,
);
token('gitlab-pat', ['GITLAB_TOKEN'], (g) => `glpat-${g.chars(B64URL, 20)}`);
token('gitlab-runner-token', ['CI_RUNNER_TOKEN'], (g) => `glrt-${g.chars(B64URL, 20)}`);
token('gitlab-deploy-token', ['GITLAB_DEPLOY_TOKEN'], (g) => `gldt-${g.chars(B64URL, 20)}`);
token('gitlab-pipeline-trigger-token', ['TRIGGER_TOKEN'], (g) => `glptt-${g.chars(HEX, 40)}`);
token(
  'bitbucket-app-password',
  ['BITBUCKET_APP_PASSWORD'],
  (g) => `ATBB${g.chars(B62, 32)}${g.chars(HEX.toUpperCase(), 8)}`,
);
token('npm-token', ['NPM_TOKEN'], (g) => githubToken(g, 'npm_')); // same CRC32 scheme as GitHub's
custom(
  'npmrc-auth',
  (g) => {
    const v = b64(`ci:${g.password()}`);
    return c(
      'npmrc',
      `registry=https://registry.npmjs.org/\n` +
        `//registry.npmjs.org/:_auth=${v}\n` +
        `always-auth=true`,
      v,
    );
  },
  (g) => {
    const v = `npm_${g.chars(B62, 36)}`;
    return c(
      'npmrc',
      `//npm.pkg.github.com/:_authToken=${v}\n@acme:registry=https://npm.pkg.github.com`,
      v,
    );
  },
);
token(
  'pypi-token',
  ['PYPI_TOKEN', 'TWINE_PASSWORD'],
  (g) => `pypi-AgEIcHlwaS5vcmc${g.chars(B64URL, 150)}`,
);
token('rubygems-api-key', ['GEM_HOST_API_KEY'], (g) => `rubygems_${g.chars(HEX, 48)}`);
token('nuget-api-key', ['NUGET_API_KEY'], (g) => `oy2${g.chars(LOWER_NUM, 43)}`);
token('dockerhub-token', ['DOCKERHUB_TOKEN'], (g) => `dckr_pat_${g.chars(B64URL, 27)}`);
custom(
  'docker-config-auth',
  (g) => {
    const v = b64(`acme:${g.password()}`);
    return c(
      'json',
      `{\n` +
        `  "auths": {\n` +
        `    "https://index.docker.io/v1/": {\n` +
        `      "auth": "${v}"\n` +
        `    }\n` +
        `  }\n` +
        `}`,
      v,
    );
  },
  (g) => {
    const p = g.password();
    return c(
      'shell',
      `$ echo '${p}' | docker login ghcr.io -u acme --password-stdin\n` +
        `$ docker login -u acme -p ${p} registry.acme.io`,
      p,
    );
  },
);
token('buildkite-token', ['BUILDKITE_API_TOKEN'], (g) => `bkua_${g.chars(HEX, 40)}`);
token(
  'sourcegraph-token',
  ['SRC_ACCESS_TOKEN'],
  (g) => `sgp_${g.chars(HEX, 16)}_${g.chars(HEX, 40)}`,
);
token(
  'postman-api-key',
  ['POSTMAN_API_KEY'],
  (g) => `PMAK-${g.chars(HEX, 24)}-${g.chars(HEX, 34)}`,
);
token('prefect-api-key', ['PREFECT_API_KEY'], (g) => `pnu_${g.chars(B62, 36)}`);
token(
  'atlassian-api-token',
  ['JIRA_API_TOKEN'],
  (g) => `ATATT3xFfGF0${g.chars(B64URL, 170)}=${g.chars(HEX.toUpperCase(), 8)}`,
);
token('linear-api-key', ['LINEAR_API_KEY'], (g) => `lin_api_${g.chars(B62, 40)}`);
token('figma-token', ['FIGMA_TOKEN'], (g) => `figd_${g.chars(B64URL, 40)}`);
token('contentful-token', ['CONTENTFUL_MANAGEMENT_TOKEN'], (g) => `CFPAT-${g.chars(B64URL, 43)}`);
token('sentry-user-token', ['SENTRY_AUTH_TOKEN'], (g) => `sntryu_${g.chars(HEX, 64)}`);
token(
  'sentry-org-token',
  ['SENTRY_AUTH_TOKEN'],
  (g) =>
    `sntrys_${b64(JSON.stringify({ iat: 1_760_000_000 + g.int(0, 1e6), url: 'https://sentry.io', org: 'acme' })).replace(/=+$/, '')}_${g.chars(B64, 43)}`,
);
token('grafana-cloud-token', ['GRAFANA_CLOUD_TOKEN'], (g) => `glc_${g.chars(B64, 120)}==`);
token(
  'grafana-service-account-token',
  ['GRAFANA_TOKEN'],
  (g) => `glsa_${g.chars(B62, 32)}_${g.chars(HEX, 8)}`,
);
token(
  'circleci-token',
  ['CIRCLECI_TOKEN'],
  (g) => `CCIPAT_${g.chars(B62, 22)}_${g.chars(HEX, 40)}`,
);
token('jfrog-api-key', ['JFROG_API_KEY', 'ARTIFACTORY_API_KEY'], (g) => `AKCp${g.chars(B62, 69)}`);
token('jfrog-reference-token', ['JFROG_ACCESS_TOKEN'], (g) => `cmVmdGtuOjAxOj${g.chars(B62, 50)}`);
token(
  'sonarqube-token',
  ['SONAR_TOKEN'],
  (g) => `${g.pick(['squ_', 'sqp_', 'sqa_'])}${g.chars(HEX, 40)}`,
);
keyed('snyk-token', ['SNYK_TOKEN'], (g) => g.uuid());
keyed('codecov-token', ['CODECOV_TOKEN'], (g) => g.uuid());
keyed('travis-token', ['TRAVIS_API_TOKEN'], (g) => g.chars(B64URL, 22));

// Messaging, payments, SaaS
token(
  'slack-bot-token',
  ['SLACK_BOT_TOKEN'],
  (g) => `xoxb-${g.digits(12)}-${g.digits(13)}-${g.chars(B62, 24)}`,
);
token(
  'slack-user-token',
  ['SLACK_USER_TOKEN'],
  (g) => `xoxp-${g.digits(12)}-${g.digits(12)}-${g.digits(13)}-${g.chars(HEX, 32)}`,
);
token(
  'slack-app-token',
  ['SLACK_APP_TOKEN'],
  (g) => `xapp-1-A${g.chars(UPPER_NUM, 10)}-${g.digits(13)}-${g.chars(HEX, 64)}`,
);
token('slack-config-token', ['SLACK_CONFIG_TOKEN'], (g) => `xoxe.xoxp-1-${g.chars(B62, 150)}`);
custom('slack-webhook-url', (g) => {
  const s = `T${g.chars(UPPER_NUM, 8)}/B${g.chars(UPPER_NUM, 8)}/${g.chars(B62, 24)}`;
  return c(
    'curl',
    `$ curl -X POST -H 'Content-type: application/json' --data '{"text":"deployed"}' ` +
      `https://hooks.slack.com/services/${s}`,
    s,
  );
});
custom('discord-webhook-url', (g) => {
  const s = g.chars(B64URL, 68);
  return c('dotenv', `DISCORD_WEBHOOK=https://discord.com/api/webhooks/${g.digits(18)}/${s}`, s);
});
const discordToken = (g: Gen) =>
  `${b64(g.digits(g.int(18, 19))).replace(/=+$/, '')}.${g.chars(B64URL, 6)}.${g.chars(B64URL, 38)}`;
kinds.push({
  kind: 'discord-bot-token',
  names: ['DISCORD_TOKEN', 'DISCORD_BOT_TOKEN', 'BOT_TOKEN'],
  value: discordToken,
  bare: true,
});
custom(
  'discord-bot-token-code',
  (g) => {
    const t = discordToken(g);
    return c(
      'python',
      `import discord\nclient = discord.Client(intents=intents)\nclient.run('${t}')`,
      t,
    );
  },
  (g) => {
    const t = discordToken(g);
    return c(
      'javascript',
      `const client = new Client({ intents: [GatewayIntentBits.Guilds] });\n` +
        `client.login("${t}");`,
      t,
    );
  },
  (g) => {
    const t = discordToken(g);
    return c('http', `GET /api/v10/users/@me HTTP/1.1\r\nAuthorization: Bot ${t}\r\n`, t);
  },
);
custom('teams-webhook-url', (g) => {
  const s = `${g.uuid()}@${g.uuid()}/IncomingWebhook/${g.chars(HEX, 32)}/${g.uuid()}`;
  return c('yaml', `notify:\n  teams: https://acme.webhook.office.com/webhookb2/${s}\n`, s);
});
token(
  'telegram-bot-token',
  ['TELEGRAM_BOT_TOKEN'],
  (g) => `${g.digits(10)}:AA${g.chars(B64URL, 33)}`,
);
token('twilio-api-key', ['TWILIO_API_KEY'], (g) => `SK${g.chars(HEX, 32)}`);
keyed('twilio-auth-token', ['TWILIO_AUTH_TOKEN'], (g) => g.chars(HEX, 32));
token(
  'sendgrid-api-key',
  ['SENDGRID_API_KEY'],
  (g) => `SG.${g.chars(B64URL, 22)}.${g.chars(B64URL, 43)}`,
);
token('mailgun-api-key', ['MAILGUN_API_KEY'], (g) => `key-${g.chars(HEX, 32)}`);
token('mailchimp-api-key', ['MAILCHIMP_API_KEY'], (g) => `${g.chars(HEX, 32)}-us${g.int(1, 21)}`);
keyed('postmark-server-token', ['POSTMARK_SERVER_TOKEN'], (g) => g.uuid());
token('stripe-secret-key', ['STRIPE_SECRET_KEY'], (g) => `sk_live_${g.chars(B62, 99)}`);
token('stripe-test-secret-key', ['STRIPE_SECRET_KEY'], (g) => `sk_test_${g.chars(B62, 99)}`);
token('stripe-restricted-key', ['STRIPE_RESTRICTED_KEY'], (g) => `rk_live_${g.chars(B62, 99)}`);
token('stripe-webhook-secret', ['STRIPE_WEBHOOK_SECRET'], (g) => `whsec_${g.chars(B64, 32)}`);
token('square-access-token', ['SQUARE_ACCESS_TOKEN'], (g) => `EAAA${g.chars(B64URL, 60)}`);
token(
  'square-legacy-access-token',
  ['SQUARE_ACCESS_TOKEN'],
  (g) => `sq0atp-${g.chars(B64URL, 22)}`,
);
token('square-oauth-secret', ['SQUARE_APPLICATION_SECRET'], (g) => `sq0csp-${g.chars(B64URL, 43)}`);
token('shopify-access-token', ['SHOPIFY_ACCESS_TOKEN'], (g) => `shpat_${g.chars(HEX, 32)}`);
token('shopify-shared-secret', ['SHOPIFY_API_SECRET'], (g) => `shpss_${g.chars(HEX, 32)}`);
token('notion-token', ['NOTION_TOKEN'], (g) => `ntn_${g.digits(11)}${g.chars(B62, 35)}`);
token(
  'mapbox-secret-token',
  ['MAPBOX_SECRET_TOKEN'],
  (g) =>
    `sk.${b64url(JSON.stringify({ u: 'acme', a: g.chars(LOWER_NUM, 25) }))}.${g.chars(B64URL, 22)}`,
);
token('adobe-client-secret', ['ADOBE_CLIENT_SECRET'], (g) => `p8e-${g.chars(B64URL, 32)}`);
token(
  'airtable-pat',
  ['AIRTABLE_API_KEY', 'AIRTABLE_TOKEN'],
  (g) => `pat${g.chars(B62, 14)}.${g.chars(HEX, 64)}`,
);
keyed('airtable-legacy-api-key', ['AIRTABLE_API_KEY'], (g) => `key${g.chars(B62, 14)}`);
keyed('okta-api-token', ['OKTA_API_TOKEN', 'OKTA_TOKEN'], (g) => `00${g.chars(B64URL, 40)}`);
custom(
  'okta-ssws-header',
  (g) => {
    const t = `00${g.chars(B64URL, 40)}`;
    return c(
      'curl-header',
      `$ curl -H "Accept: application/json" -H "Authorization: SSWS ${t}" https://acme.okta.com/api/v1/users?limit=25`,
      t,
    );
  },
  (g) => {
    const t = `00${g.chars(B64URL, 40)}`;
    return c(
      'http',
      `GET /api/v1/users HTTP/1.1\r\nHost: acme.okta.com\r\nAuthorization: SSWS ${t}\r\n`,
      t,
    );
  },
);
keyed('auth0-client-secret', ['AUTH0_CLIENT_SECRET'], (g) => g.chars(B64URL, 64));
token(
  'braintree-access-token',
  ['BRAINTREE_ACCESS_TOKEN'],
  (g) => `access_token$production$${g.chars(LOWER_NUM, 16)}$${g.chars(HEX, 32)}`,
);
keyed('paypal-client-secret', ['PAYPAL_CLIENT_SECRET'], (g) => g.chars(B64URL, 80));
token('facebook-access-token', ['FACEBOOK_ACCESS_TOKEN'], (g) => `EAAB${g.chars(B62, 180)}`);
keyed('datadog-api-key', ['DD_API_KEY', 'DATADOG_API_KEY'], (g) => g.chars(HEX, 32));
keyed('datadog-app-key', ['DD_APP_KEY', 'DATADOG_APP_KEY'], (g) => g.chars(HEX, 40));
keyed('algolia-admin-key', ['ALGOLIA_ADMIN_KEY', 'ALGOLIA_API_KEY'], (g) => g.chars(HEX, 32));
token('launchdarkly-sdk-key', ['LD_SDK_KEY', 'LAUNCHDARKLY_SDK_KEY'], (g) => `sdk-${g.uuid()}`);
token('launchdarkly-api-token', ['LD_API_TOKEN'], (g) => `api-${g.uuid()}`);
keyed('segment-write-key', ['SEGMENT_WRITE_KEY'], (g) => g.chars(B62, 32));
keyed('pagerduty-token', ['PAGERDUTY_TOKEN'], (g) => `u+${g.chars(B64URL, 18)}`);
keyed('honeycomb-api-key', ['HONEYCOMB_API_KEY'], (g) => g.chars(B62, 22));
keyed('zendesk-api-token', ['ZENDESK_API_TOKEN'], (g) => g.chars(B62, 40));
keyed('intercom-access-token', ['INTERCOM_ACCESS_TOKEN'], (g) => `dG9rOj${g.chars(B64, 54)}=`);
token(
  'hubspot-private-app-token',
  ['HUBSPOT_ACCESS_TOKEN'],
  (g) => `pat-${g.pick(['na1', 'eu1'])}-${g.uuid()}`,
);
token(
  'clickup-api-token',
  ['CLICKUP_API_TOKEN'],
  (g) => `pk_${g.digits(8)}_${g.chars(UPPER_NUM, 32)}`,
);
token('dropbox-access-token', ['DROPBOX_ACCESS_TOKEN'], (g) => `sl.${g.chars(B64URL, 138)}`);
token(
  'twitter-bearer-token',
  ['TWITTER_BEARER_TOKEN'],
  (g) => `AAAAAAAAAAAAAAAAAAAAA${g.chars(B62, 30)}%3D${g.chars(B62, 50)}`,
);
keyed('twitch-client-secret', ['TWITCH_CLIENT_SECRET'], (g) => g.chars(LOWER_NUM, 30));
keyed('zoom-client-secret', ['ZOOM_CLIENT_SECRET'], (g) => g.chars(B62, 32));
keyed(
  'trello-api-token',
  ['TRELLO_TOKEN'],
  (g) => `ATTA${g.chars(HEX, 64)}${g.chars(HEX.toUpperCase(), 8)}`,
);
keyed(
  'asana-pat',
  ['ASANA_ACCESS_TOKEN'],
  (g) => `2/${g.digits(16)}/${g.digits(16)}:${g.chars(HEX, 32)}`,
);
keyed('plaid-secret', ['PLAID_SECRET'], (g) => g.chars(HEX, 30));
keyed('coinbase-api-secret', ['COINBASE_API_SECRET'], (g) => g.chars(B62, 32));
keyed('pusher-secret', ['PUSHER_APP_SECRET', 'PUSHER_SECRET'], (g) => g.chars(HEX, 20));
keyed(
  'mapbox-download-token',
  ['MAPBOX_DOWNLOADS_TOKEN'],
  (g) =>
    `sk.${b64url(JSON.stringify({ u: 'acme', a: g.chars(LOWER_NUM, 25) }))}.${g.chars(B64URL, 22)}`,
);

// Formats, config files and app frameworks
token('age-secret-key', ['SOPS_AGE_KEY'], (g) =>
  bech32('age-secret-key-', g.bytes(32)).toUpperCase(),
);
token('jwt', ['ACCESS_TOKEN', 'ID_TOKEN'], jwt);
for (const label of [
  'RSA PRIVATE KEY',
  'EC PRIVATE KEY',
  'OPENSSH PRIVATE KEY',
  'PRIVATE KEY',
  'ENCRYPTED PRIVATE KEY',
  'PGP PRIVATE KEY BLOCK',
]) {
  custom(
    `private-key-${label.toLowerCase().replace(/ /g, '-')}`,
    (g) => {
      const k = pemBlock(g, label);
      return c(
        'file',
        `$ cat ~/.ssh/deploy_key\n` + `${k}\n` + `$ chmod 600 ~/.ssh/deploy_key`,
        k.slice(40, 100),
        k.slice(-90, -40),
      );
    },
    (g) => {
      const k = pemBlock(g, label, '\\n');
      return c('json', `{"name": "deploy", "key": "${k}\\n"}`, k.slice(40, 100), k.slice(-90, -40));
    },
    (g) => {
      const k = pemBlock(g, label).split('\n').slice(0, 4).join('\n');
      return c('truncated-output', `tool output (truncated):\n${k}`, k.slice(40, 100));
    },
  );
}
custom(
  'kubeconfig-client-key-data',
  (g) => {
    const k = b64(pemBlock(g, g.pick(['RSA PRIVATE KEY', 'EC PRIVATE KEY', 'PRIVATE KEY'])) + '\n');
    const ca = b64(pemBlock(g, 'CERTIFICATE'));
    const t =
      `users:\n` +
      `- name: admin@prod\n` +
      `  user:\n` +
      `    client-certificate-data: ${ca}\n` +
      `    client-key-data: ${k}\n`;
    return c('kubeconfig', t, k);
  },
  (g) => {
    const k = b64(pemBlock(g, 'RSA PRIVATE KEY') + '\n');
    return c(
      'kubectl',
      `$ kubectl config view --raw -o jsonpath='{.users[0].user.client-key-data}'\n` + `${k}`,
      k,
    );
  },
  (g) => {
    const k = b64(pemBlock(g, 'EC PRIVATE KEY') + '\n');
    return c(
      'json',
      JSON.stringify({ users: [{ name: 'admin', user: { 'client-key-data': k } }] }),
      k,
    );
  },
);
custom('kubernetes-secret-data', (g) => {
  const p = b64(g.password());
  const t =
    `apiVersion: v1\n` +
    `kind: Secret\n` +
    `metadata:\n` +
    `  name: db\n` +
    `type: Opaque\n` +
    `data:\n` +
    `  username: ${b64('app')}\n` +
    `  password: ${p}\n`;
  return c('yaml', t, p);
});
custom('putty-private-key', (g) => {
  const lines = Array.from({ length: 6 }, () => g.b64Bytes(48));
  const t =
    `PuTTY-User-Key-File-3: ssh-ed25519\n` +
    `Encryption: none\n` +
    `Comment: deploy\n` +
    `Public-Lines: 2\n` +
    `${g.b64Bytes(48)}\n` +
    `${g.b64Bytes(20)}\n` +
    `Private-Lines: 6\n` +
    `${lines.join('\n')}\n` +
    `Private-MAC: ${g.chars(HEX, 64)}`;
  return c('file', t, ...lines);
});
custom(
  'laravel-app-key',
  (g) => {
    const k = `base64:${g.b64Bytes(32)}`;
    return c('dotenv', `APP_NAME=Acme\nAPP_ENV=production\nAPP_KEY=${k}\nAPP_DEBUG=false`, k);
  },
  (g) => {
    const k = `base64:${g.b64Bytes(32)}`;
    return c('shell', `$ php artisan key:generate --show\n${k}\n$ `, k);
  },
  (g) => {
    const k = `base64:${g.b64Bytes(32)}`;
    return c('php', `'key' => env('APP_KEY', '${k}'),\n'cipher' => 'AES-256-CBC',`, k);
  },
  (g) => {
    const k = `base64:${g.b64Bytes(32)}`;
    return c(
      'tool-result',
      JSON.stringify({ stdout: `Application key [${k}] set successfully.\n` }),
      k,
    );
  },
);
keyed('rails-master-key', ['RAILS_MASTER_KEY'], (g) => g.chars(HEX, 32));
keyed(
  'django-secret-key',
  ['DJANGO_SECRET_KEY', 'SECRET_KEY'],
  (g) => `django-insecure-${g.chars(LOWER_NUM + '!@#$%^&*(-_=+)', 50)}`,
);
kinds.push({ kind: 'symfony-app-secret', names: ['APP_SECRET'], value: (g) => g.chars(HEX, 32) });
kinds.push({
  kind: 'dotenv-key-symbolic',
  names: [
    'ENCRYPTION_KEY',
    'SIGNING_KEY',
    'MASTER_KEY',
    'JWT_SIGNING_KEY',
    'COOKIE_KEY',
    'SESSION_KEY',
    'HMAC_KEY',
  ],
  value: (g) => g.password('!#%*+-.:=?@^_~[]{}') + g.chars(B62, 8),
  only: ['dotenv', 'shell-export', 'log', 'docker'],
});
kinds.push({
  kind: 'dotenv-key-hex',
  names: ['ENCRYPTION_KEY', 'DATA_KEY', 'AES_KEY', 'WEBHOOK_SIGNING_KEY'],
  value: (g) => g.chars(HEX, 64),
});
kinds.push({
  kind: 'dotenv-key-base64',
  names: ['ENCRYPTION_KEY', 'NEXTAUTH_KEY', 'CRYPT_KEY', 'APP_ENCRYPTION_KEY'],
  value: (g) => g.b64Bytes(32),
});
kinds.push({
  kind: 'dotenv-master-key',
  names: ['RAILS_MASTER_KEY', 'MEILI_MASTER_KEY', 'VAULT_MASTER_KEY', 'APP_MASTER_KEY'],
  value: (g) => g.chars(B64URL, 32),
});
kinds.push({
  kind: 'dotenv-secret-symbolic',
  names: [
    'SESSION_SECRET',
    'JWT_SECRET',
    'NEXTAUTH_SECRET',
    'COOKIE_SECRET',
    'APP_SECRET',
    'CLIENT_SECRET',
  ],
  value: (g) => g.password('!#%*+-.:=?@^_~[]{}') + g.chars(B62, 6),
  only: ['dotenv', 'shell-export', 'log', 'docker'],
});
kinds.push({
  kind: 'dotenv-password-symbolic',
  names: [
    'POSTGRES_PASSWORD',
    'MYSQL_ROOT_PASSWORD',
    'DB_PASSWORD',
    'REDIS_PASSWORD',
    'SMTP_PASSWORD',
    'ADMIN_PASSWORD',
  ],
  value: (g) => g.password('*[~!#%^&()-_+=.:,?@{}'),
  only: ['dotenv', 'shell-export', 'log', 'docker'],
});
kinds.push({
  kind: 'password-plain',
  names: ['DB_PASSWORD', 'PASSWORD', 'SMTP_PASS', 'DATABASE_PASSWORD', 'PGPASSWORD'],
  value: (g) => g.password('!#%^*-_.'),
});
custom(
  'password-with-commas',
  (g) => {
    const p = `${g.chars(LOWER, 3)},${g.chars(LOWER, 3)},${g.chars(LOWER, 3)}!`;
    return c('log', `2026-03-04 10:22:31 INFO admin password: ${p} was set for user ops`, p);
  },
  (g) => {
    const p = `${g.chars(B62, 4)},${g.chars(B62, 5)},${g.chars(B62, 3)}${g.int(10, 99)}`;
    return c('yaml', `database:\n  user: app\n  password: ${p}\n  pool: 5`, p);
  },
  (g) => {
    const p = `${g.chars(B62, 5)},${g.chars(SYMBOLS, 2)}${g.chars(B62, 5)}`;
    return c(
      'log',
      `[2026-03-04 10:22:31] local.DEBUG: connecting host=db user=app password=${p} ` + `port=5432`,
      p,
    );
  },
  (g) => {
    const p = `${g.chars(B62, 4)},${g.chars(B62, 4)},${g.chars(B62, 4)}`;
    return c('dotenv', `SMTP_USER=mailer\nSMTP_PASSWORD=${p}\n`, p);
  },
);
custom(
  'password-in-log-line',
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'log',
      `Mar 04 10:22:31 web-1 app[812]: login attempt user=admin password=${p} ip=10.0.3.7 ` +
        `status=failed`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'log',
      `{"level":"debug","msg":"db connect","dsn":"host=db user=app password=${p} ` +
        `dbname=app sslmode=require"}`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'stack-trace',
      `Traceback (most recent call last):\n` +
        `  File "/app/db.py", line 12, in connect\n` +
        `    conn = psycopg2.connect(host="db", user="app", password="${p}")\n` +
        `psycopg2.OperationalError: FATAL: password authentication failed`,
      p,
    );
  },
);
custom(
  'secret-in-prose',
  (g) => {
    const p = g.password('!#%^*-_@');
    return c('chat', `My staging db password is ${p} if you need to log in.`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_@');
    return c('chat', `ok, the admin password was set to ${p}. Can you try again?`, p);
  },
  (g) => {
    const k = g.chars(HEX, 32);
    return c('chat', `The Mailgun signing key is ${k} (from the dashboard).`, k);
  },
  (g) => {
    const p = g.password('!#%^*-_@');
    return c(
      'tool-result',
      JSON.stringify({ stdout: `User created. Temporary password is "${p}".\n` }),
      p,
    );
  },
);
custom(
  'xml-config-secret',
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'nuget-config',
      `<packageSourceCredentials>\n` +
        `  <acme>\n` +
        `    <add key="Username" value="ci" />\n` +
        `    <add key="ClearTextPassword" value="${p}" />\n` +
        `  </acme>\n` +
        `</packageSourceCredentials>`,
      p,
    );
  },
  (g) => {
    const p = g.chars(B62, 32);
    return c(
      'app-config',
      `<appSettings>\n` +
        `  <add key="StripeApiKey" value="${p}"/>\n` +
        `  <add key="Environment" value="Production"/>\n` +
        `</appSettings>`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'spring-xml',
      `<bean id="ds" class="org.apache.commons.dbcp2.BasicDataSource">\n` +
        `  <property name="username" value="app"/>\n` +
        `  <property name="password" value="${p}"/>\n` +
        `</bean>`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'maven-settings',
      `<server>\n` +
        `  <id>releases</id>\n` +
        `  <username>deploy</username>\n` +
        `  <password>${p}</password>\n` +
        `</server>`,
      p,
    );
  },
  (g) => {
    const p = g.chars(B62, 40);
    return c('xml', `<config><clientSecret>${p}</clientSecret><region>eu</region></config>`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'tomcat-users',
      `<tomcat-users>\n` +
        `  <user username="admin" password="${p}" roles="manager-gui"/>\n` +
        `</tomcat-users>`,
      p,
    );
  },
);
custom(
  'mssql-connection-string',
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'appsettings',
      `"ConnectionStrings": {\n` +
        `  "Default": "Server=tcp:acme.database.windows.net,1433;Initial Catalog=app;User ` +
        `ID=app;Password=${p};Encrypt=True;"\n` +
        `}`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'dotenv',
      `SQL_CONN=Data Source=db01;Initial Catalog=Sales;User Id=sa;Pwd=${p};TrustServerCertificate=True`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*-_.@;=');
    return c('csharp', `var cs = "Server=db01;Database=Sales;User Id=sa;Password={${p}};";`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('cli', `$ sqlcmd -S db01 -U sa -P '${p}' -Q "SELECT @@VERSION"`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'jdbc',
      `spring.datasource.url=jdbc:sqlserver://db01:1433;databaseName=Sales;user=sa;password=${p};encrypt=true`,
      p,
    );
  },
);
const urlPassword = (g: Gen) => g.password('!*-_.~');
custom(
  'url-password',
  (g) => {
    const p = urlPassword(g);
    return c('dotenv', `DATABASE_URL=mysql://app:${p}@db.internal:3306/app`, p);
  },
  (g) => {
    const p = urlPassword(g);
    return c('dotenv', `REDIS_URL=redis://default:${p}@cache.internal:6379/0`, p);
  },
  (g) => {
    const p = urlPassword(g);
    return c('shell', `$ redis-cli -u redis://:${p}@cache.internal:6379 ping\nPONG`, p);
  },
  (g) => {
    const p = urlPassword(g);
    return c(
      'yaml',
      `spring:\n  datasource:\n    url: postgresql://app:${p}@db:5432/app?sslmode=require`,
      p,
    );
  },
  (g) => {
    const p = urlPassword(g);
    return c(
      'log',
      `2026-03-04 10:22:31 ERROR could not connect to mongodb+srv://admin:${p}@cluster0.abcde.mongodb.net/app: ` +
        `timeout`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*$&');
    return c('dotenv', `CELERY_BROKER_URL=amqp://worker:${p}@rabbit:5672//`, p);
  },
  (g) => {
    const p = g.password('!#%^*$&?/');
    return c('dotenv', `MYSQL_URL=mysql://root:${p}@127.0.0.1:3306/app`, p);
  },
  (g) => {
    const p = urlPassword(g);
    return c(
      'tool-args',
      JSON.stringify({ dsn: `rediss://default:${p}@eu1-redis.upstash.io:6379` }),
      p,
    );
  },
  (g) => {
    const p = urlPassword(g);
    return c(
      'git',
      `$ git remote -v\norigin\thttps://ci-bot:${p}@git.acme.io/platform/api.git (fetch)`,
      p,
    );
  },
);
custom(
  'cli-password-flag',
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('shell', `$ mysql -h db -u root -p${p} app < dump.sql`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('shell', `$ mysqldump -uroot --password=${p} --all-databases > all.sql`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('shell', `$ redis-cli -h cache -a ${p} INFO keyspace`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('shell', `$ sshpass -p '${p}' ssh deploy@10.0.0.5 uptime`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('redis-conf', `bind 0.0.0.0\nrequirepass ${p}\nmasterauth ${p}\n`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'shell',
      `$ openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout ` +
        `pass:${p}`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('shell', `$ curl -u admin:${p} https://jenkins.acme.io/api/json`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('pgpass', `# ~/.pgpass\ndb.internal:5432:app:app:${p}\n`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('netrc', `machine api.acme.io\n  login deploy\n  password ${p}\n`, p);
  },
);
custom(
  'http-cookie',
  (g) => {
    const [s, t] = [g.chars(LOWER_NUM, 32), g.chars(B62, 64)];
    return c(
      'curl-b',
      `$ curl -b "sessionid=${s}; csrftoken=${t}" https://app.acme.io/api/me`,
      s,
      t,
    );
  },
  (g) => {
    const s = g.chars(B64URL, 43);
    return c(
      'curl-cookie',
      `$ curl --cookie 'session=${s}' -X POST https://app.acme.io/api/export`,
      s,
    );
  },
  (g) => {
    const [s, t] = [g.chars(HEX, 40), g.chars(B62, 48)];
    return c(
      'http',
      `GET /dashboard HTTP/1.1\r\n` +
        `Host: app.acme.io\r\n` +
        `Cookie: _ga=GA1.2.1234.5678; sessionid=${s}; XSRF-TOKEN=${t}\r\n`,
      s,
      t,
    );
  },
  (g) => {
    const s = `s%3A${g.chars(B64URL, 32)}.${g.chars(B64URL, 43)}`;
    return c(
      'http',
      `HTTP/1.1 302 Found\r\n` +
        `Location: /home\r\n` +
        `Set-Cookie: connect.sid=${s}; Path=/; HttpOnly; Secure; SameSite=Lax\r\n`,
      s,
    );
  },
  (g) => {
    const s = g.chars(B64URL, 60);
    return c(
      'curl-header',
      `$ curl -H "Cookie: __Secure-next-auth.session-token=${s}" https://app.acme.io/api/session`,
      s,
    );
  },
  (g) => {
    const s = g.chars(B64URL, 40);
    return c(
      'cookie-jar',
      `# Netscape HTTP Cookie File\n` +
        `.acme.io\tTRUE\t/\tTRUE\t1767225600\tremember_token\t${s}\n`,
      s,
    );
  },
  (g) => {
    const s = jwt(g);
    return c('json', JSON.stringify({ headers: { Cookie: `auth=${s}; theme=dark` } }), s);
  },
  (g) => {
    const s = g.chars(HEX, 32);
    return c('devtools', `set-cookie: PHPSESSID=${s}; path=/; secure; HttpOnly`, s);
  },
);
custom(
  'api-key-header',
  (g) => {
    const k = g.chars(B62, 32);
    return c('curl-header', `$ curl -H "X-Api-Key: ${k}" https://api.acme.io/v2/reports`, k);
  },
  (g) => {
    const k = g.chars(HEX, 40);
    return c('curl-header', `$ curl https://api.acme.io/v1 -H 'x-auth-token: ${k}'`, k);
  },
  (g) => {
    const k = g.chars(B62, 50);
    return c(
      'http',
      `GET /v1/search HTTP/1.1\r\n` +
        `X-RapidAPI-Key: ${k}\r\n` +
        `X-RapidAPI-Host: search.p.rapidapi.com\r\n`,
      k,
    );
  },
  (g) => {
    const k = g.chars(B62, 32);
    return c(
      'fetch',
      `fetch(url, { headers: { 'X-API-KEY': '${k}', 'Content-Type': 'application/json' ` + `} })`,
      k,
    );
  },
  (g) => {
    const k = g.chars(HEX, 32);
    return c(
      'curl-header',
      `$ curl -X POST "https://api.datadoghq.com/api/v1/series" -H "DD-API-KEY: ` +
        `${k}" -d @metrics.json`,
      k,
    );
  },
  (g) => {
    const k = g.chars(B64URL, 40);
    return c('http', `POST /graphql HTTP/1.1\r\nX-Access-Token: ${k}\r\n`, k);
  },
  (g) => {
    const k = g.chars(B62, 40);
    return c('curl-header', `$ curl -H "apikey: ${k}" https://acme.supabase.co/rest/v1/users`, k);
  },
  (g) => {
    const k = `${g.chars(B62, 20)}`;
    return c(
      'curl-header',
      `$ curl -H "X-Vault-Token: s.${k}" https://vault.acme.io/v1/secret/data/app`,
      `s.${k}`,
    );
  },
);
custom('authorization-basic', (g) => {
  const v = b64(`admin:${g.password()}`);
  return c('http', `POST /api/v1/deploy HTTP/1.1\r\nAuthorization: Basic ${v}\r\n`, v);
});
custom('wifi-psk', (g) => {
  const p = g.password('!#%^*-_.@');
  return c('wpa-supplicant', `network={\n    ssid="acme-office"\n    psk="${p}"\n}`, p);
});
custom('ansible-vault-password', (g) => {
  const p = g.password('!#%^*-_.@');
  return c('yaml', `all:\n  vars:\n    ansible_become_pass: ${p}\n    ansible_user: deploy`, p);
});
custom(
  'generic-assignment-names',
  (g) => {
    const v = g.chars(B62, 32);
    return c('python', `STRIPE_KEY = "${v}"`, v);
  },
  (g) => {
    const v = g.chars(B64URL, 40);
    return c('yaml', `credentials:\n  client_secret: ${v}\n  client_id: acme-web`, v);
  },
  (g) => {
    const v = g.chars(HEX, 48);
    return c('json', `{"webhookSecret": "${v}", "url": "https://acme.io/hook"}`, v);
  },
  (g) => {
    const v = g.chars(B62, 36);
    return c('toml', `[auth]\nprivate_token = "${v}"`, v);
  },
  (g) => {
    const v = g.chars(B62, 40);
    return c('go', `const apiSecret = "${v}"`, v);
  },
  (g) => {
    const v = g.chars(B64URL, 48);
    return c('ruby', `config.secret_key_base = '${v}'`, v);
  },
  (g) => {
    const v = g.chars(B62, 30);
    return c('php', `define('AUTH_KEY', '${v}');`, v);
  },
  (g) => {
    const v = g.chars(HEX, 32);
    return c('ini', `[mail]\nsmtp_pass = ${v}`, v);
  },
);

customOwn(
  // Review s65f: a password flag at the end of a quoted command string, and argv arrays held in text.
  'command-string-end',
  0x5f65,
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('package-json', `{\n  "scripts": {\n    "db:reset": "mysql -uroot -p${p}"\n  }\n}`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'package-json',
      `{"scripts": {"flush": "redis-cli -a ${p}", "up": "docker compose up"}}`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('dockerfile', `RUN sh -c "sqlcmd -S localhost -U sa -P ${p}"`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('python', `subprocess.run("mysql -uroot -p${p}", shell=True)`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('js', `execSync('sshpass -p ${p}')`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('shell', `$ echo ${p} | docker login --password-stdin -u deploy ghcr.io`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c(
      'docker-inspect',
      `"Cmd": [\n    "redis-server",\n    "--requirepass",\n    "${p}"\n],`,
      p,
    );
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('docker-inspect', `"Args": ["psql", "-h", "db", "--password", "${p}"]`, p);
  },
);

customOwn(
  // Review s65f: the AWS CLI's table and text output, and a key pair told in prose.
  'aws-cli-output-secret',
  0x5f66,
  (g) => {
    const [a, s] = [`ASIA${g.chars(BASE32, 16)}`, g.chars(B64, 40)];
    const row = (k: string, v: string) => `||  ${k.padEnd(16)}|  ${v.padEnd(40)}||\n`;
    const t =
      row('AccessKeyId', a) +
      row('Expiration', '2026-12-08T02:00:00+00:00') +
      row('SecretAccessKey', s);
    return c('aws-table', `$ aws sts get-session-token --output table\n${t}`, a, s);
  },
  (g) => {
    const [a, s] = [`AKIA${g.chars(BASE32, 16)}`, g.chars(B64, 40)];
    return c(
      'aws-text',
      `ACCESSKEY\t${a}\t2026-12-07T10:00:00+00:00\t${s}\tActive\tdeploy-bot`,
      a,
      s,
    );
  },
  (g) => {
    const [a, s] = [`AKIA${g.chars(BASE32, 16)}`, g.chars(B64, 40)];
    return c('prose', `Here are the new credentials.\nAccess key: ${a}\nSecret key: ${s}\n`, a, s);
  },
);

customOwn(
  // Review s65i: compact JSON argv arrays, `aws configure`'s prompt, and the text output's tabs as blanks.
  'argv-compact-aws-configure',
  0x5f69,
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('json', `{"Cmd":["redis-cli","-h","cache","-a","${p}","ping"]}`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('json', `["mysql","-uroot","-p${p}"]`, p);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('json', `["sqlcmd","-S","db","-U","sa","-P","${p}"]`, p);
  },
  (g) => {
    const [a, s] = [`AKIA${g.chars(BASE32, 16)}`, g.chars(B64, 40)];
    return c(
      'aws-configure',
      `$ aws configure\nAWS Access Key ID [None]: ${a}\nAWS Secret Access Key [None]: ${s}\n` +
        'Default region name [None]: eu-west-1\n',
      a,
      s,
    );
  },
  (g) => {
    const [a, s] = [`AKIA${g.chars(BASE32, 16)}`, g.chars(B64, 40)];
    return c('aws-text', `ACCESSKEY  ${a}  2026-12-07T10:00:00+00:00  ${s}  Active  bot`, a, s);
  },
  (g) => {
    const p = g.password('!#%^*-_.@');
    return c('markdown', `Run \`mysql -uroot -p${p}\` to connect.`, p);
  },
);

// ---------------------------------------------------------------------------------------------------------
// Near-misses: things that look like secrets but are not. Each generator returns a value to place.
// ---------------------------------------------------------------------------------------------------------

interface MissKind {
  kind: string;
  /** Texts, each built whole (the context is part of what makes it a near-miss). */
  texts: ((g: Gen) => [context: string, text: string])[];
}

// Review s68a: secret-setting commands, structured cookies, a whole .pgpass, seed phrases, RPC URL keys.
const rand = (g: Gen) => g.chars(B62, g.int(20, 32));
custom(
  'secret-setting-command',
  (g) => {
    const v = rand(g);
    return c('shell', `$ gh secret set DEPLOY_TOKEN --body "${v}" --repo acme/api`, v);
  },
  (g) => {
    const v = rand(g);
    return c('shell', `$ gh variable set NPM_TOKEN -b ${v}`, v);
  },
  (g) => {
    const v = rand(g);
    return c(
      'shell',
      `$ aws secretsmanager put-secret-value --secret-id prod/db --secret-string '${v}'`,
      v,
    );
  },
  (g) => {
    const v = rand(g);
    return c('shell', `$ echo -n '${v}' | npx wrangler secret put API_KEY`, v);
  },
  (g) => {
    const v = rand(g);
    return c('shell', `$ echo "${v}" | gcloud secrets versions add db-password --data-file=-`, v);
  },
  (g) => {
    const v = rand(g);
    return c('shell', `$ npm config set //npm.acme.internal/:_authToken ${v}`, v);
  },
  (g) => {
    const v = rand(g);
    return c('shell', `$ poetry config pypi-token.pypi ${v}`, v);
  },
  (g) => {
    const v = rand(g);
    return c('shell', `> setx OPENAI_API_KEY ${v}`, v);
  },
  (g) => {
    const v = rand(g);
    return c('fish', `set -x DB_PASSWORD ${v}`, v);
  },
  (g) => {
    const v = rand(g);
    return c('shell', `$ az login --service-principal -u ${g.uuid()} -p ${v} --tenant acme.io`, v);
  },
);
custom(
  'structured-cookie',
  (g) => {
    const v = g.chars(LOWER_NUM, 32);
    const state = { cookies: [{ name: 'sessionid', value: v, domain: 'acme.io', path: '/' }] };
    return c('playwright', JSON.stringify(state, null, 2), v);
  },
  (g) => {
    const v = g.chars(B62, 40);
    return c('python', `requests.get(url, cookies={"sid": "${v}"})`, v);
  },
  (g) => {
    const v = g.chars(B62, 40);
    return c('javascript', `document.cookie = "session=${v}; path=/";`, v);
  },
);
custom('pgpass-entries', (g) => {
  const [a, b] = [g.password('!#%^*-_.@'), g.password('!#%^*-_.@')];
  return c('pgpass', `$ cat ~/.pgpass\ndb1:5432:app:app:${a}\n*:*:*:postgres:${b}\n`, a, b);
});
const BIP39 = [
  'orbit',
  'velvet',
  'lumber',
  'crisp',
  'naive',
  'dolphin',
  'shrug',
  'ankle',
  'wealth',
];
const seedPhrase = (g: Gen) => Array.from({ length: 12 }, () => g.pick(BIP39)).join(' ');
custom(
  'seed-phrase',
  (g) => {
    const v = seedPhrase(g);
    return c('dotenv', `MNEMONIC="${v}"`, v);
  },
  (g) => {
    const v = seedPhrase(g);
    return c('javascript', `accounts: { mnemonic: "${v}" },`, v);
  },
  (g) => {
    const v = seedPhrase(g);
    return c('shell', `$ anvil --mnemonic "${v}"`, v);
  },
);
custom(
  'rpc-url-key',
  (g) => {
    const v = g.chars(B62, 32);
    return c('dotenv', `MAINNET_RPC=https://eth-mainnet.g.alchemy.com/v2/${v}`, v);
  },
  (g) => {
    const v = g.chars(HEX, 32);
    return c('dotenv', `SEPOLIA_RPC=https://sepolia.infura.io/v3/${v}`, v);
  },
);

const misses: MissKind[] = [];
const miss = (kind: string, ...texts: MissKind['texts']) => misses.push({ kind, texts });

/** Places a non-secret value in the named contexts under a secret-looking name. */
function namedMisses(
  names: string[],
  value: Value,
  contexts = Object.keys(NAMED),
): MissKind['texts'] {
  return contexts.map((ctx) => (g: Gen) => [ctx, NAMED[ctx]!(g.pick(names), value(g), g)]);
}

miss(
  'placeholder',
  ...namedMisses(
    [
      'API_KEY',
      'STRIPE_SECRET_KEY',
      'DB_PASSWORD',
      'GITHUB_TOKEN',
      'CLIENT_SECRET',
      'ENCRYPTION_KEY',
      'AWS_SECRET_ACCESS_KEY',
    ],
    (g) =>
      g.pick([
        'your_api_key_here',
        'sk_test_your_key_here',
        '<YOUR_API_KEY>',
        'xxxxxxxxxxxxxxxxxxxxxxxx',
        'REPLACE_ME',
        'changeme',
        '********',
        'your-secret-here',
        'ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
        'sk-...',
        'TODO',
        '<password>',
        'your_password',
        '[YOUR_TOKEN]',
        'insert-key-here',
        'AKIAXXXXXXXXXXXXXXXX',
        'sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
        'dummy',
        'placeholder',
        'example',
      ]),
  ),
);
miss(
  'documented-example-key',
  ...namedMisses(['AWS_ACCESS_KEY_ID'], () => 'AKIAIOSFODNN7EXAMPLE', [
    'dotenv',
    'ini',
    'json',
    'yaml',
    'log',
  ]),
  ...namedMisses(['AWS_SECRET_ACCESS_KEY'], () => 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', [
    'dotenv',
    'ini',
    'json',
    'yaml',
    'toml',
  ]),
  (g) => [
    'docs',
    `The Telegram docs show a token like 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11 (run ${g.int(1, 9)}).`,
  ],
  () => ['dotenv', 'TELEGRAM_BOT_TOKEN=123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11'],
  () => [
    'aws-docs',
    '[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  ],
  () => [
    'aws-docs',
    'export AWS_ACCESS_KEY_ID=AKIAI44QH8DHBEXAMPLE\nexport AWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY',
  ],
  () => [
    'azurite',
    'AZURITE=DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;',
  ],
  () => [
    'jwt-io',
    'Paste eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c into jwt.io to see the claims.',
  ],
  () => ['slack-docs', 'SLACK_BOT_TOKEN=xoxb-not-a-real-token-this-will-not-work'],
  () => [
    'stripe-docs',
    "stripe.api_key = 'sk_test_4eC39HqLyjWDarjtT1zdp7dc'  # Stripe's documented test key",
  ],
  () => [
    'github-docs',
    'curl -H "Authorization: token ghp_16C7e42F292c6912E7710c838347Ae178B4a" (example from the docs)',
  ],
  () => ['aws-docs', 'aws_session_token = AQoDYXdzEJr...<remainder of session token>'],
  () => [
    'twilio-docs',
    'TWILIO_AUTH_TOKEN=your_auth_token\nTWILIO_ACCOUNT_SID=ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX',
  ],
);
miss(
  'env-reference',
  ...namedMisses(
    [
      'DB_PASSWORD',
      'API_KEY',
      'SECRET_KEY',
      'GITHUB_TOKEN',
      'CLIENT_SECRET',
      'REDIS_PASSWORD',
      'ENCRYPTION_KEY',
    ],
    (g) =>
      g.pick([
        '%(DB_PASSWORD)s',
        '${DB_PASSWORD}',
        '$API_KEY',
        '{{ .Values.secretKey }}',
        '${{ secrets.GITHUB_TOKEN }}',
        '%DB_PASSWORD%',
        '{{ vault "secret/data/app" "password" }}',
        '#{ENV["SECRET_KEY"]}',
        '${env:API_KEY}',
        '${ssm:/prod/db/password}',
        '{{resolve:secretsmanager:prod/db:SecretString:password}}',
        'op://Engineering/db/password',
        'vault:secret/data/app#token',
        '@Microsoft.KeyVault(SecretUri=https://acme.vault.azure.net/secrets/db/)',
      ]),
    ['dotenv', 'yaml', 'json', 'toml', 'ini', 'docker', 'log'],
  ),
  () => ['python', "password = os.environ['DB_PASSWORD']\napi_key = os.getenv('API_KEY')"],
  () => [
    'javascript',
    'const apiKey = process.env.STRIPE_SECRET_KEY;\nconst token = process.env["GITHUB_TOKEN"];',
  ],
  () => ['ruby', "secret = ENV['SECRET_KEY_BASE']\npassword = ENV.fetch('DB_PASSWORD')"],
  () => ['python-ini', '[database]\npassword = %(DB_PASSWORD)s\nhost = %(DB_HOST)s'],
  () => [
    'compose',
    'environment:\n  - POSTGRES_PASSWORD=${POSTGRES_PASSWORD:?err}\n  - API_KEY=${API_KEY:-}',
  ],
  () => [
    'k8s',
    'env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password',
  ],
  () => [
    'terraform',
    'password = var.db_password\napi_key  = data.vault_generic_secret.app.data["api_key"]',
  ],
  () => ['go', 'token := os.Getenv("GITHUB_TOKEN")\nsecret := viper.GetString("client_secret")'],
  () => ['java', 'String password = System.getenv("DB_PASSWORD");'],
  () => ['csharp', 'var key = Environment.GetEnvironmentVariable("API_KEY");'],
  () => [
    'github-actions',
    'env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n  AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}',
  ],
  () => ['mssql', 'Server=db01;Database=Sales;User Id=sa;Password=$(SQL_PASSWORD);'],
  () => ['ansible', 'db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6231'],
  () => ['cloudformation', 'MasterUserPassword: !Ref DbPassword\nApiKey: !GetAtt Secret.Value'],
  () => ['url', 'DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app'],
  () => ['xml', '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />'],
  () => ['cookie', 'curl -b "sessionid=$SESSION_ID" https://app.acme.io/api/me'],
);
miss(
  'secret-setting-near-miss',
  () => ['shell', '$ aws secretsmanager get-secret-value --secret-id prod/db/password'],
  () => ['shell', '$ gh secret set DEPLOY_TOKEN --body "$DEPLOY_TOKEN" --repo acme/api'],
  () => ['shell', '$ gh secret set DEPLOY_TOKEN < token.txt'],
  () => ['shell', '$ echo building | grep secret'],
  () => ['shell', '$ git config --get github.token'],
  () => ['shell', '$ npm config set registry https://npm.acme.internal/'],
  () => ['fish', 'set -x GITHUB_TOKEN (gh auth token)'],
  () => ['prose', 'The config token parameter is described below.'],
  () => ['shell', '$ docker run --name mongo -p 27017:27017 mongo'],
  () => ['playwright', '{"cookies": [{"name": "theme", "value": "dark", "domain": "acme.io"}]}'],
  () => ['capstone', '{"address": 4096, "mnemonic": "mov", "op_str": "rax, rbx"}'],
  () => [
    'prose',
    'seed phrase: write down these twelve words in order and keep them somewhere safe',
  ],
  () => ['url', 'https://docs.alchemy.com/v2/reference/api-overview'],
  // Review s68e: ordinary values of setting commands, prose under a cookies key, a pgpass then prose.
  () => ['shell', '$ gh variable set AWS_REGION --body eu-west-1'],
  () => ['shell', '$ gh variable set APP_VERSION --body "v2.14.0" --repo acme/api'],
  () => ['shell', '$ git config --global user.signingkey 3AA5C34371567BD2'],
  () => ['shell', '$ git config --global user.signingkey ~/.ssh/id_ed25519.pub'],
  () => ['shell', '$ git config --global http.sslKey /etc/ssl/private/client2.key'],
  () => ['fish', 'set -x SSH_AUTH_SOCK /run/user/1000/gnupg/S.gpg-agent.ssh'],
  () => ['fish', 'set -x KEYMAP us-intl2024'],
  () => [
    'shell',
    '$ gcloud config set auth/impersonate_service_account deployer@acme-prod-42.iam.gserviceaccount.com',
  ],
  () => [
    'shell',
    '$ echo "Deploying v1.2.3" | tee -a deploy.log && wrangler secret put API_KEY < key.txt',
  ],
  () => [
    'i18n',
    JSON.stringify(
      {
        cookies: {
          title: 'Cookie settings',
          description: 'Functionality cookies remember your choices',
          analytics: 'Performance measurement',
        },
      },
      null,
      2,
    ),
  ],
  () => [
    'javascript',
    'module.exports = { cookies: { prefix: "__Host-", secure: "true", encoding: "base64url" } }',
  ],
  () => ['shell', '$ chmod 600 ~/.pgpass\r\n\r\nDone: psql connects without a prompt now.\r\n'],
);
const jsonObjects = [
  { redirect: '/home', page: 2, sort: 'created_at' },
  { user: 'alice', role: 'viewer', theme: 'dark' },
  { query: 'select all invoices from last month', limit: 50 },
  { cursor: { id: 1834, ts: '2026-01-02T03:04:05Z' } },
  { name: 'Quarterly report', tags: ['finance', 'q1'], draft: true },
  { event: 'page_view', path: '/pricing', referrer: 'https://www.google.com/' },
];
const proseLines = [
  'The quick brown fox jumps over the lazy dog, and then it takes a well-earned nap in the sun.',
  'Meeting notes: we agreed to ship the billing page next week, after the accessibility review.',
  '# README\n\nThis project builds the documentation site. Run make docs to preview it locally.\n',
  'Dear team, the office will be closed on Monday for maintenance of the heating system.',
];
miss(
  'base64-of-json',
  ...jsonObjects.map((o) => (): [string, string] => [
    'query-param',
    `GET /search?state=${b64url(JSON.stringify(o))} HTTP/1.1`,
  ]),
  ...jsonObjects.map((o) => (): [string, string] => [
    'json',
    `{"next_page": "${b64(JSON.stringify(o))}", "count": 50}`,
  ]),
  ...jsonObjects.map((o) => (): [string, string] => [
    'yaml',
    `annotations:\n  acme.io/config: ${b64(JSON.stringify(o))}`,
  ]),
  ...jsonObjects.map((o) => (): [string, string] => [
    'log',
    `2026-03-04 DEBUG decoded payload=${b64(JSON.stringify(o))} ok`,
  ]),
);
miss(
  'base64-of-prose',
  ...proseLines.map((p) => (): [string, string] => [
    'github-api',
    `{"type": "file", "encoding": "base64", "content": "${b64(p)}"}`,
  ]),
  ...proseLines.map((p) => (): [string, string] => [
    'email',
    `Content-Transfer-Encoding: base64\n\n${b64(p)}`,
  ]),
  ...proseLines.map((p) => (): [string, string] => ['shell', `$ echo '${b64(p)}' | base64 -d`]),
  ...proseLines.map((p) => (): [string, string] => [
    'data-uri',
    `<a href="data:text/plain;base64,${b64(p)}">notes</a>`,
  ]),
);
miss(
  'hash-and-digest',
  (g) => ['git', `commit ${g.chars(HEX, 40)}\nAuthor: Dev <dev@acme.io>\n\n    fix: retry on 503`],
  (g) => ['lockfile', `"integrity": "sha512-${g.b64Bytes(64)}"`],
  (g) => ['docker', `FROM node:20@sha256:${g.chars(HEX, 64)}`],
  (g) => ['checksum', `${g.chars(HEX, 64)}  satchel-linux-x64.tar.gz`],
  (g) => ['pip', `requests==2.32.3 \\\n    --hash=sha256:${g.chars(HEX, 64)}`],
  (g) => ['etag', `HTTP/1.1 200 OK\r\nETag: "${g.chars(HEX, 32)}"\r\n`],
  (g) => ['go-sum', `github.com/acme/lib v1.2.3 h1:${g.b64Bytes(32)}`],
  (g) => [
    'lockfile',
    `resolved "https://registry.yarnpkg.com/x/-/x-1.0.0.tgz#${g.chars(HEX, 40)}"`,
  ],
  (g) => ['md5', `md5sum: ${g.chars(HEX, 32)} report.csv`],
  (g) => ['s3', `"ETag": "\\"${g.chars(HEX, 32)}-12\\""`],
  (g) => [
    'sri',
    `<script src="https://cdn.acme.io/app.js" integrity="sha384-${g.b64Bytes(48)}" crossorigin="anonymous"></script>`,
  ],
  (g) => ['cargo', `checksum = "${g.chars(HEX, 64)}"`],
);
miss(
  'identifier',
  (g) => ['log', `request_id=${g.uuid()} trace_id=${g.chars(HEX, 32)} span_id=${g.chars(HEX, 16)}`],
  (g) => [
    'azure',
    `AZURE_TENANT_ID=${g.uuid()}\nAZURE_CLIENT_ID=${g.uuid()}\nAZURE_SUBSCRIPTION_ID=${g.uuid()}`,
  ],
  (g) => ['twilio', `TWILIO_ACCOUNT_SID=AC${g.chars(HEX, 32)}`],
  (g) => [
    'stripe',
    `{"id": "cus_${g.chars(B62, 14)}", "default_source": "card_${g.chars(B62, 24)}", "invoice": "in_${g.chars(B62, 24)}"}`,
  ],
  (g) => ['stripe', `STRIPE_PUBLISHABLE_KEY=pk_live_${g.chars(B62, 99)}`],
  (g) => [
    'mapbox',
    `mapboxgl.accessToken = 'pk.${b64url(JSON.stringify({ u: 'acme', a: g.chars(LOWER_NUM, 25) }))}.${g.chars(B64URL, 22)}';`,
  ],
  (g) => ['square', `SQUARE_APPLICATION_ID=sq0idp-${g.chars(B64URL, 22)}`],
  (g) => ['discord', `<@${g.digits(18)}> joined channel ${g.digits(19)}`],
  (g) => [
    'slack',
    `{"channel": "C${g.chars(UPPER_NUM, 10)}", "user": "U${g.chars(UPPER_NUM, 10)}", "ts": "${g.digits(10)}.${g.digits(6)}"}`,
  ],
  (g) => ['aws', `arn:aws:iam::${g.digits(12)}:role/deploy-${g.chars(LOWER, 6)}`],
  (g) => ['gcp', `"client_id": "${g.digits(21)}", "project_id": "acme-prod-${g.digits(6)}"`],
  (g) => [
    'appinsights',
    `APPLICATIONINSIGHTS_CONNECTION_STRING=InstrumentationKey=${g.uuid()};IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/`,
  ],
  (g) => ['langfuse', `LANGFUSE_PUBLIC_KEY=pk-lf-${g.uuid()}`],
  (g) => ['algolia', `ALGOLIA_APP_ID=${g.chars(UPPER_NUM, 10)}\nALGOLIA_INDEX=products`],
  (g) => [
    'google',
    `GOOGLE_CLIENT_ID=${g.digits(12)}-${g.chars(LOWER_NUM, 32)}.apps.googleusercontent.com`,
  ],
);
miss(
  'public-key-material',
  (g) => ['ssh', `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${g.chars(B64, 43)} dev@laptop`],
  (g) => ['ssh', `ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ${g.chars(B64, 500)} ci@runner`],
  (g) => ['pem', pemBlock(g, 'PUBLIC KEY')],
  (g) => ['pem', pemBlock(g, 'CERTIFICATE')],
  (g) => [
    'kubeconfig',
    `clusters:\n- cluster:\n    certificate-authority-data: ${b64(pemBlock(g, 'CERTIFICATE'))}\n    server: https://10.0.0.1:6443`,
  ],
  (g) => ['kubeconfig', `    client-certificate-data: ${b64(pemBlock(g, 'CERTIFICATE'))}`],
  (g) => [
    'pgp',
    `-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n${g.b64Bytes(48)}\n${g.b64Bytes(48)}\n-----END PGP PUBLIC KEY BLOCK-----`,
  ],
  (g) => ['age', `# public key: age1${g.chars('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}`],
  (g) => [
    'known-hosts',
    `github.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB${g.chars(B64, 88)}=`,
  ],
  (g) => [
    'jwks',
    JSON.stringify({
      keys: [{ kty: 'RSA', kid: g.chars(HEX, 16), n: g.chars(B64URL, 342), e: 'AQAB' }],
    }),
  ],
);
miss(
  'code-and-config-words',
  () => [
    'python',
    'def check_password(password: str) -> bool:\n    return bcrypt.checkpw(password.encode(), stored_hash)',
  ],
  () => ['typescript', 'const { token, refreshToken } = await auth.login({ username, password });'],
  () => ['yaml', 'auth:\n  passwordless: true\n  password_min_length: 12\n  token_ttl: 3600'],
  () => [
    'dotenv',
    'PASSWORD_MIN_LENGTH=12\nTOKEN_TTL=3600\nSESSION_KEY_PREFIX=sess:\nCACHE_KEY=users',
  ],
  () => [
    'dotenv',
    'PUBLIC_KEY_PATH=/etc/keys/pub.pem\nSSH_KEY_PATH=~/.ssh/id_ed25519\nSECRET_FILE=/run/secrets/db_password',
  ],
  () => [
    'dotenv',
    'API_KEY_HEADER=X-Api-Key\nTOKEN_URL=https://oauth2.googleapis.com/token\nKMS_KEY=alias/satchel-prod',
  ],
  () => [
    'sql',
    'CREATE TABLE users (id serial PRIMARY KEY, password_hash text NOT NULL, api_key_id uuid);',
  ],
  () => [
    'json',
    '{"usage": {"prompt_tokens": 1200, "completion_tokens": 345, "total_tokens": 1545}, "max_tokens": 4096}',
  ],
  () => [
    'yaml',
    'dynamodb:\n  partition_key: tenant_id\n  sort_key: created_at\n  primary_key: id',
  ],
  () => [
    'http',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nIdempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324\r\n',
  ],
  () => ['shell', '$ pwd\n/home/dev/project\n$ PWD=/tmp make build'],
  () => ['shell', '$ mkdir -p build/out && docker run -p 8080:80 nginx'],
  () => ['k8s', 'volumes:\n- name: creds\n  secret:\n    secretName: db-credentials'],
  () => [
    'prose',
    'The password must be at least 12 characters. Rotate the API key every 90 days; tokens expire after one hour.',
  ],
  () => [
    'prose',
    'token: the smallest unit a tokenizer produces; secret: something you do not share.',
  ],
  () => ['cookie', 'Cookie: theme=dark; lang=en-US; consent=yes'],
  () => ['cookie', 'Set-Cookie: consent=yes; Path=/; Max-Age=31536000; SameSite=Lax'],
  () => [
    'url',
    'postgres://app@db.internal:5432/app and redis://localhost:6379/0 and https://acme.io:8443/x',
  ],
  () => ['url', 'mysql://root@localhost/app?charset=utf8mb4'],
  () => ['version', 'Released v1.0-beta and v1.0-rc1; see cloudflared 2024.1.0.'],
  () => ['laravel', 'APP_KEY=\n# run php artisan key:generate to set APP_KEY=base64:...'],
  () => ['xml', '<add key="Environment" value="Production" />\n<add key="MaxRetries" value="5" />'],
  () => [
    'mssql',
    'Server=db01;Database=Sales;Integrated Security=SSPI;TrustServerCertificate=True',
  ],
  () => [
    'header',
    'X-Request-Id: 42\r\nX-RateLimit-Remaining: 4999\r\nX-Api-Version: 2024-06-01\r\n',
  ],
  () => ['logs', '2026-03-04 10:22:31 WARN password reset requested for user=alice@example.com'],
  () => ['logs', '2026-03-04 10:22:31 INFO token refreshed for session=42 (expires in 3600s)'],
  () => ['shell', '$ mysql -h db -u root -p app < dump.sql\nEnter password:'],
  () => ['shell', '$ redis-cli -h cache --no-auth-warning INFO keyspace'],
  () => [
    'package-json',
    '{"scripts": {"db": "mysql -uroot -p", "cache": "redis-cli -h cache -p 6379"}}',
  ],
  () => ['docker-inspect', '"Cmd": ["redis-server", "--port", "6380", "--appendonly", "yes"],'],
  () => ['shell', '$ echo $CR_PAT | docker login ghcr.io -u deploy --password-stdin'],
  () => [
    'go-test',
    '=== RUN   TestParseConfig\n--- PASS: TestParseConfig (0.00s)\nPASS\nok  \tacme/config\t0.012s',
  ],
  () => ['make-check', 'PASS: tests/test_parser\nPASS: test-suite.log\n# TOTAL: 2\n# PASS:  2\n'],
  () => ['aws-text', 'ACCESSKEYMETADATA\t2026-12-07T10:00:00+00:00\tActive\tdeploy-bot'],
  () => ['prose', 'The secret key is rotated every 90 days; the secret key: see the vault.'],
  () => ['css', '.token.keyword { color: #07a; } .secret-banner { display: none; }'],
  () => ['git', 'Merge pull request #42 from acme/fix-password-reset-token-expiry'],
  () => [
    'prose',
    'The password is incorrect. The token is expired; the key is rotated every 90 days.',
  ],
  () => [
    'prose',
    'Your password is too short: it must be at least 12 characters (8+ is the minimum).',
  ],
  () => ['prose', 'The API key is stored in Vault and the secret is mounted at /run/secrets/api.'],
  () => ['prose', 'The primary key is (tenant_id, id) and the sort key is created_at.'],
  // Blanks after an AWS name (review s52f): no key of both cases follows.
  () => [
    'aws-cli',
    'Set the aws_secret_access_key field in ~/.aws/credentials, then run aws configure list.',
  ],
  () => [
    'aws-cli',
    '$ aws configure set aws_secret_access_key "$AWS_SECRET_ACCESS_KEY" --profile ci\n' +
      '$ aws configure set aws_session_token ${AWS_SESSION_TOKEN} --profile ci',
  ],
  () => ['aws-cli', '$ aws configure get aws_secret_access_key --profile ci'],
  () => [
    'git',
    '$ git log --oneline -S secret_access_key 3f9c2a7d1e8b4c6f0a5d9e2b7c1f4a8d6e3b0c9f',
  ],
  () => [
    'aws-docs',
    'aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  ],
);
miss(
  'random-looking-non-secrets',
  (g) => ['uuid-list', Array.from({ length: 4 }, () => g.uuid()).join('\n')],
  (g) => ['timestamp', `${g.digits(13)} ${g.digits(10)}.${g.digits(6)}`],
  (g) => ['color', `--primary: #${g.chars(HEX, 6)}; --accent: #${g.chars(HEX, 6)};`],
  (g) => ['filename', `/var/cache/build/${g.chars(HEX, 32)}/chunk-${g.chars(LOWER_NUM, 8)}.js`],
  (g) => ['webpack', `main.${g.chars(HEX, 20)}.js  vendors.${g.chars(HEX, 20)}.js`],
  (g) => ['youtube', `https://www.youtube.com/watch?v=${g.chars(B64URL, 11)}`],
  (g) => ['nonce', `<script nonce="${g.b64Bytes(16)}">init()</script>`],
  (g) => ['s3-key', `s3://acme-logs/2026/03/04/${g.chars(HEX, 32)}.json.gz`],
  (g) => ['docker-id', `CONTAINER ID   IMAGE\n${g.chars(HEX, 12)}   nginx:1.27`],
  (g) => ['otp-url', `https://acme.io/verify?email=alice%40example.com&page=${g.int(1, 9)}`],
);

miss(
  'pagination-and-state-tokens',
  (g) => [
    'aws-cli',
    JSON.stringify(
      {
        Contents: [{ Key: `logs/2026/03/04/${g.chars(HEX, 8)}.json.gz`, Size: g.int(100, 99999) }],
        NextToken: b64(JSON.stringify({ v: 1, c: g.digits(6) })),
      },
      null,
      2,
    ),
  ],
  (g) => [
    'graphql',
    `{"pageInfo": {"endCursor": "${b64(`arrayconnection:${g.int(10, 999)}`)}", "hasNextPage": true}}`,
  ],
  (g) => ['google-api', `{"nextPageToken": "${g.chars(B64URL, 24)}", "items": []}`],
  (g) => [
    'k8s',
    `{"metadata": {"continue": "${b64(JSON.stringify({ v: 'meta.k8s.io/v1', rv: g.digits(7), start: 'pod-42' }))}"}}`,
  ],
  (g) => [
    'yaml',
    `pagination:
  continuation_token: ${g.chars(B64URL, 32)}
  page_size: 100`,
  ],
  (g) => ['log', `2026-03-04 INFO sync page next_token=${g.chars(B64URL, 28)} fetched=100`],
  (g) => ['json', `{"sync_token": "${g.digits(12)}", "page_token": "${g.chars(B62, 20)}"}`],
  (g) => [
    'tokenizer',
    `{"input_ids": [${Array.from({ length: 8 }, () => g.int(0, 50000)).join(', ')}], "token_type_ids": [0, 0, 0]}`,
  ],
);
miss(
  'non-secret-keys-and-cookies',
  (g) => [
    's3',
    `{"Bucket": "acme-uploads", "Key": "uploads/2026/03/${g.chars(HEX, 16)}/report-${g.digits(4)}.pdf"}`,
  ],
  (g) => [
    'json',
    `{"s3Key": "exports/${g.uuid()}.csv", "cacheKey": "user:${g.digits(6)}:profile:v2"}`,
  ],
  (g) => [
    'dynamodb',
    `{"partitionKey": "TENANT#${g.digits(8)}", "sortKey": "ORDER#${g.iso8601()}"}`,
  ],
  (g) => [
    'i18n',
    `{"key": "settings.notifications.${g.pick(['email', 'push', 'sms'])}_enabled_v${g.int(2, 9)}", "value": "Enabled"}`,
  ],
  (g) => [
    'cookie',
    `Cookie: _ga=GA1.2.${g.digits(10)}.${g.digits(10)}; _gid=GA1.2.${g.digits(9)}.${g.digits(10)}; theme=dark`,
  ],
  (g) => [
    'cookie',
    `Set-Cookie: lang=en-US; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Max-Age=${g.digits(8)}`,
  ],
  (g) => ['react', `items.map((item) => <Row key={item.id} />) // key=${g.digits(6)}`],
  (g) => ['redis', `redis> GET session:${g.digits(6)}:meta\n"{\"user\":42}"\nredis> KEYS cache:*`],
  (g) => ['pem-b64', `ca.crt: ${b64(pemBlock(g, 'CERTIFICATE'))}`],
  (g) => [
    'pgp-signature',
    `-----BEGIN PGP SIGNATURE-----\n\n${g.b64Bytes(48)}\n${g.b64Bytes(20)}\n-----END PGP SIGNATURE-----`,
  ],
  (g) => ['recaptcha', `RECAPTCHA_SITE_KEY=6L${g.chars(B64URL, 38)}`],
  (g) => ['vapid', `VAPID_PUBLIC_KEY=B${g.chars(B64URL, 86)}`],
  (g) => ['kms', `{"encryptionKey": "arn:aws:kms:eu-west-1:${g.digits(12)}:key/${g.uuid()}"}`],
  (g) => [
    'redis',
    `{"redisKey": "user:${g.digits(6)}:session:v2", "dedupeKey": "order-${g.digits(8)}"}`,
  ],
  (g) => [
    'dotenv',
    `CACHE_KEY_PREFIX=app\nKMS_KEY=alias/acme-prod-${g.digits(4)}\nSTORAGE_KEY=exports/${g.digits(4)}/data.csv`,
  ],
  (g) => [
    'prose',
    `The shortcut key is Ctrl+Shift+P; the token is ${g.pick(['expired', 'revoked', 'valid'])}.`,
  ],
);
miss(
  // Review s65i: compact argv arrays without a password, an echo piped elsewhere, empty aws prompts.
  'argv-compact-aws-configure-near',
  (g) => ['json', `["redis-cli","-h","cache","-p","${g.int(6000, 6999)}"]`],
  (g) => ['json', `["mysql","-h","db","-P","${g.int(3300, 3399)}","-u","app"]`],
  (g) => [
    'shell',
    `echo building${g.digits(3)} | tee log; echo $TOKEN | docker login --password-stdin`,
  ],
  (g) => [
    'aws-configure',
    `AWS Secret Access Key [None]: \nDefault region name [None]: eu-west-${g.int(1, 3)}`,
  ],
  (g) => [
    'aws-text',
    `ACCESSKEYMETADATA  AKIAIOSFODNN7EXAMPLE  2026-12-07T10:00:0${g.int(0, 9)}+00:00  Active  bot`,
  ],
);
miss(
  'base64-blobs',
  // Random base64 with a '/' before token-like prefixes: an image must not lose pieces of itself.
  (g) => [
    'data-uri',
    `![chart](data:image/png;base64,${g.b64Bytes(90)}/EAAB${g.chars(B62, 70)}+${g.b64Bytes(60)})`,
  ],
  (g) => [
    'data-uri',
    `data:image/png;base64,iVBORw0KGgo${g.b64Bytes(60)}/${'A'.repeat(24)}${g.chars(B62, 60)}+${g.b64Bytes(30)}`,
  ],
  (g) => ['json', `{"image": "${g.b64Bytes(120)}", "thumbnail": "${g.b64Bytes(48)}"}`],
  (g) => ['pdf', `%PDF-1.7 stream\n${g.b64Bytes(300)}\nendstream`],
);

// ---------------------------------------------------------------------------------------------------------

/** Builds the corpus. The same seed always gives the same corpus. */
export function secretCorpus(seed = 0x5ec12e7): SecretCorpus {
  const shared = new Gen(seed);
  const positives: PositiveCase[] = [];
  for (const k of kinds) {
    const g = k.stream === undefined ? shared : new Gen(seed ^ k.stream);
    if (k.custom) {
      // Each custom context at least twice (fresh values), so that a kind is not judged on one sample.
      const rounds = Math.max(2, Math.ceil(6 / k.custom.length));
      for (let r = 0; r < rounds; r++) {
        for (const place of k.custom) positives.push({ kind: k.kind, ...place(g) });
      }
      continue;
    }
    const named = k.only ?? Object.keys(NAMED);
    const contexts = [...named.map((n) => NAMED[n]!), ...(k.bare ? Object.values(BARE) : [])];
    const labels = [...named, ...(k.bare ? Object.keys(BARE) : [])];
    contexts.forEach((place, i) => {
      const value = k.value(g);
      const text = place(g.pick(k.names), value, g);
      // In JSON tool arguments a value is escaped: the stored form is what must go.
      const escaped = labels[i] === 'tool-args' || labels[i] === 'tool-result';
      const secret = escaped ? JSON.stringify(value).slice(1, -1) : value;
      positives.push({ kind: k.kind, context: labels[i]!, text, secrets: [secret] });
    });
  }
  const nearMisses: NearMissCase[] = [];
  const g = shared;
  for (const m of misses) {
    for (const make of m.texts) {
      // Generators that draw from the PRNG run three times (fresh values); fixed texts once.
      for (let r = 0; r < (make.length > 0 ? 3 : 1); r++) {
        const [context, text] = make(g);
        nearMisses.push({ kind: m.kind, context, text });
      }
    }
  }
  return { positives, nearMisses };
}
