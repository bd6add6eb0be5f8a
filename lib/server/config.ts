import { sha256 } from '../model/digest.js';
import { isValidNamespace, isValidSessionId } from '../model/ids.js';
import {
  createLogger,
  parseLogFormat,
  type LogFormat,
  type Logger,
  type LoggerOptions,
} from '../model/log.js';
import { defaultPipeline } from '../pipeline/default.js';
import { MIN_KNOWN_VALUE } from '../pipeline/redact.js';
import type { ModelConfig } from '../continue/model.js';
import type { HookConfig } from '../hooks/hooks.js';

export type { HookConfig, ModelConfig };

/**
 * The one config loader: turns environment variables (process.env, or Workers vars and secrets) into a
 * typed config. The app never reads the environment itself. A bad value fails at start with a message
 * that names the variable.
 */

export type Env = Record<string, string | undefined>;

export interface TokenEntry {
  namespace: string;
  device: string;
  readOnly: boolean;
  /** SHA-256 of the token (given as `sha256:<hex>`, or computed from the plain token at load). */
  digest: Uint8Array;
}

export interface S3Config {
  endpoint?: string;
  region: string;
  bucket: string;
  prefix: string;
  forcePathStyle: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `AWS_SESSION_TOKEN`: temporary credentials (Lambda's execution role sets all three). */
  sessionToken?: string;
}

export type StorageConfig =
  { kind: 'local'; dir: string } | { kind: 's3'; s3: S3Config } | { kind: 'r2' };

export interface SatchelConfig {
  storage: StorageConfig;
  /** null: no SATCHEL_TOKENS, the local open mode (namespace `default`, no token). */
  tokens: TokenEntry[] | null;
  port: number;
  maxSessionBytes: number;
  maxBodyBytes: number;
  /**
   * Secret values redacted wherever they appear (`SATCHEL_REDACT_VALUES`, a JSON array of strings, each at
   * least `MIN_KNOWN_VALUE` characters).
   */
  redactValues: string[];
  /**
   * The secrets of the configuration itself (model and embeddings keys, hook secrets, plain tokens, the AWS
   * secret key and session token), that look like keys (`looksLikeKey`): redacted wherever they
   * appear, like `redactValues`, without being part of the rules' fingerprint (services.ts).
   */
  secrets?: string[];
  /** The embeddings service (`SATCHEL_EMBEDDINGS_*`); absent: search is lexical (configuration.md). */
  embeddings?: EmbeddingsConfig;
  /** Signed webhooks by name (`SATCHEL_HOOKS`); empty when unset. */
  hooks: ReadonlyMap<string, HookConfig>;
  /** The model that continue runs a turn with; absent unless SATCHEL_MODEL_URL and SATCHEL_MODEL are both set. */
  model?: ModelConfig;
  /** `SATCHEL_LOG`; absent: decided by the runtime (`pretty` on a terminal, `json` otherwise). */
  log?: LogFormat;
  /** `SATCHEL_CORS_ORIGINS`: origins a browser app may call the API from (none by default). */
  corsOrigins: string[];
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Loads the config; `defaultStorage` is the runtime's default (`local` on Node, `r2` on Workers, `s3` on Lambda). */
export function loadConfig(
  env: Env,
  defaultStorage: StorageConfig['kind'],
): Promise<SatchelConfig> {
  return configFrom(env, defaultStorage, s3Config);
}

/**
 * `loadConfig` with the S3 settings read by `s3`: without it, SATCHEL_STORAGE=s3 is refused (the R2-only
 * Worker bundle, which holds no S3 client and so leaves that code out).
 */
export async function configFrom(
  env: Env,
  defaultStorage: StorageConfig['kind'],
  s3?: (env: Env) => S3Config,
): Promise<SatchelConfig> {
  const kind = (env.SATCHEL_STORAGE || defaultStorage) as StorageConfig['kind'];
  let storage: StorageConfig;
  if (kind === 'local') storage = { kind, dir: env.SATCHEL_DATA_DIR || '.satchel' };
  else if (kind === 'r2') storage = { kind };
  else if (kind === 's3') {
    if (!s3)
      throw new ConfigError(
        'SATCHEL_STORAGE=s3 needs the R2+S3 bundle (dist/worker/worker.js); this one is R2-only',
      );
    storage = { kind, s3: s3(env) };
  } else
    throw new ConfigError(`SATCHEL_STORAGE must be local, s3 or r2, not ${JSON.stringify(kind)}`);
  const plain: string[] = [];
  const tokens = env.SATCHEL_TOKENS?.trim() ? await parseTokens(env.SATCHEL_TOKENS, plain) : null;
  const hooks = parseHooks(
    env.SATCHEL_HOOKS,
    tokens ? tokens.map((t) => t.namespace) : ['default'],
  );
  // Read also without a model or an embeddings service, where nothing uses them: a value meant for later
  // must not fail only once the service is set.
  const limits = modelLimits(env);
  const dims = parseIntVar(env, 'SATCHEL_EMBEDDINGS_DIMS', 0, 1, 65536);
  return {
    storage,
    tokens,
    port: parseIntVar(env, 'PORT', 8787, 0, 65535),
    // At least 4 KiB: a session's own fields and the write records of a keyed write take about 1 KiB.
    maxSessionBytes: parseIntVar(env, 'SATCHEL_MAX_SESSION_BYTES', 33554432, 4096, 2 ** 31),
    maxBodyBytes: parseIntVar(env, 'SATCHEL_MAX_BODY_BYTES', 64 * 1024 * 1024, 1024, 2 ** 31),
    redactValues: parseRedactValues(env.SATCHEL_REDACT_VALUES),
    ...(env.SATCHEL_EMBEDDINGS_URL || env.SATCHEL_EMBEDDINGS_MODEL
      ? { embeddings: parseEmbeddings(env, dims) }
      : {}),
    hooks,
    secrets: configSecrets(env, hooks, plain),
    ...(env.SATCHEL_MODEL_URL || env.SATCHEL_MODEL ? { model: parseModel(env, limits) } : {}),
    ...(env.SATCHEL_LOG?.trim() ? { log: parseLog(env.SATCHEL_LOG) } : {}),
    corsOrigins: parseOrigins(env.SATCHEL_CORS_ORIGINS),
  };
}

/** `SATCHEL_CORS_ORIGINS`: comma-separated origins (`https://app.example.com`), each scheme://host[:port]. */
export function parseOrigins(value: string | undefined): string[] {
  const origins = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const origin of origins) {
    let url: URL | null = null;
    try {
      url = new URL(origin);
    } catch {
      // refused below
    }
    if (!url || url.origin !== origin || !/^https?:$/.test(url.protocol)) {
      throw new ConfigError(
        `SATCHEL_CORS_ORIGINS: "${origin}" is not an origin; write scheme://host[:port] with no path, e.g. https://app.example.com`,
      );
    }
  }
  return origins;
}

/** The S3 settings of SATCHEL_STORAGE=s3. */
export function s3Config(env: Env): S3Config {
  if (!env.S3_BUCKET) throw new ConfigError('SATCHEL_STORAGE=s3 needs S3_BUCKET');
  // `my-bucket/prod` (a folder written into the name): the SDK refused every request with a bare 500 on
  // Workers, and Node started degraded (review s64b). Blanks are no bucket name either. An access point's
  // ARN (`arn:aws:s3:<region>:<account>:accesspoint/name`, Object Lambda's, Outposts') is a bucket the SDK
  // takes (review s64h); other ARNs it refuses on every request: a bucket's own (`arn:aws:s3:::b`), one with
  // a folder, a multi-region access point's (no SigV4a signer is installed) (reviews s64i, s64j).
  const bucket = env.S3_BUCKET;
  if (
    /^arn:/.test(bucket) &&
    !/^arn:[\w-]+:s3(-object-lambda|-outposts)?:[\w-]+:\d{12}:(outpost\/[\w-]+\/)?accesspoint[/:][\w.-]+$/.test(
      bucket,
    )
  )
    throw new ConfigError(
      "S3_BUCKET: an ARN must be an access point's (arn:aws:s3:<region>:<account>:accesspoint/<name>); " +
        'for a bucket, give its name',
    );
  if (/[\s/]/.test(bucket) && !/^arn:/.test(bucket))
    throw new ConfigError('S3_BUCKET must be a bucket name alone; put a folder in S3_PREFIX');
  checkS3Credentials(env);
  if (env.S3_ENDPOINT) checkS3Endpoint(env.S3_ENDPOINT);
  const region = env.S3_REGION || env.AWS_REGION || 'us-east-1';
  // A hostname label, as the SDK requires (it refused every request for `eu_west` or a trailing space).
  if (!/^(?!-)[a-z0-9-]{1,63}(?<!-)$/i.test(region))
    throw new ConfigError(
      `${env.S3_REGION ? 'S3_REGION' : 'AWS_REGION'} must be a region name such as eu-west-1`,
    );
  return {
    ...(env.S3_ENDPOINT ? { endpoint: env.S3_ENDPOINT } : {}),
    region,
    bucket: env.S3_BUCKET,
    prefix: env.S3_PREFIX || '',
    forcePathStyle: parseBool(
      env.S3_FORCE_PATH_STYLE,
      'S3_FORCE_PATH_STYLE',
      Boolean(env.S3_ENDPOINT),
    ),
    ...(env.AWS_ACCESS_KEY_ID ? { accessKeyId: env.AWS_ACCESS_KEY_ID } : {}),
    ...(env.AWS_SECRET_ACCESS_KEY ? { secretAccessKey: env.AWS_SECRET_ACCESS_KEY } : {}),
    ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
  };
}

/**
 * `S3_ENDPOINT`: a URL the storage client can send to (a port out of range, a space in the host or an
 * unclosed IPv6 bracket would pass a prefix check, then fail every request as storage trouble). The keys
 * have their own variables: `user:password@` is refused, as are a query and a fragment, which the client
 * would not keep. The message never repeats the value (it may hold a secret).
 */
function checkS3Endpoint(value: string): void {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // refused below
  }
  if (!url || !/^https?:\/\/[^\s/]/.test(value) || /\s$/.test(value))
    throw new ConfigError('S3_ENDPOINT must be an http(s) URL, e.g. http://127.0.0.1:9000');
  if (url.username || url.password || value.includes('?') || value.includes('#'))
    throw new ConfigError(
      'S3_ENDPOINT must be an http(s) URL without user:password@ (the keys go in AWS_ACCESS_KEY_ID and ' +
        'AWS_SECRET_ACCESS_KEY), ?query or #fragment',
    );
}

/**
 * The key pair goes together; without one, another credential source of the AWS SDK must be named
 * (a profile, a web-identity or container role), or every request would fail at run time with only
 * the log saying why.
 */
function checkS3Credentials(env: Env): void {
  const id = Boolean(env.AWS_ACCESS_KEY_ID);
  const secret = Boolean(env.AWS_SECRET_ACCESS_KEY);
  if (id && !secret)
    throw new ConfigError('AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not');
  if (secret && !id)
    throw new ConfigError('AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not');
  const other =
    env.AWS_PROFILE ||
    env.AWS_WEB_IDENTITY_TOKEN_FILE ||
    env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI ||
    env.AWS_CONTAINER_CREDENTIALS_FULL_URI;
  if (!id && !other)
    throw new ConfigError(
      'SATCHEL_STORAGE=s3 needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)',
    );
}

function parseLog(value: string): LogFormat {
  const format = parseLogFormat(value, false);
  if (!format) throw new ConfigError('SATCHEL_LOG must be json, pretty or off');
  return format;
}

/**
 * The process's logger: `config.log`, else `pretty` on a terminal and `json` elsewhere; every line goes
 * through the save pipeline's redactor (with the configured known values), so nothing that would be
 * redacted in a stored session reaches a log.
 */
export function createServerLogger(
  config: SatchelConfig,
  options: { isTTY?: boolean } & Pick<LoggerOptions, 'write' | 'quiet'> = {},
): Logger {
  const { redactText } = defaultPipeline({
    maxSessionBytes: config.maxSessionBytes,
    knownValues: [...config.redactValues, ...(config.secrets ?? [])],
  });
  return createLogger({
    ...options,
    format: config.log ?? (options.isTTY ? 'pretty' : 'json'),
    redact: redactText,
  });
}

/**
 * What the server runs with, for the start banner: storage backend, endpoint and bucket (or folder), model,
 * embeddings, hooks, auth, logs. Never a secret: no keys, no tokens, no hook secrets, no URL credentials.
 */
export function describeConfig(config: SatchelConfig): Record<string, string> {
  const out: Record<string, string> = {};
  const { storage } = config;
  if (storage.kind === 'local') out.storage = `local folder ${storage.dir}`;
  else if (storage.kind === 'r2') out.storage = 'r2 (binding BUCKET)';
  else {
    const s3 = storage.s3;
    out.storage = [
      `s3 bucket ${s3.bucket}`,
      s3.prefix ? `prefix ${s3.prefix}` : '',
      `at ${s3.endpoint ? publicUrl(s3.endpoint) : `AWS ${s3.region}`}`,
    ]
      .filter(Boolean)
      .join(', ');
  }
  out.auth =
    config.tokens === null
      ? 'none (SATCHEL_TOKENS is not set): namespace "default", loopback only'
      : `${config.tokens.length} token(s) in ${new Set(config.tokens.map((t) => t.namespace)).size} namespace(s)`;
  out.model = config.model
    ? `${config.model.model} at ${publicUrl(config.model.url)}`
    : 'none (continue stores the message only)';
  out.embeddings = config.embeddings
    ? `${config.embeddings.model} at ${publicUrl(config.embeddings.url)}`
    : 'none (lexical search, local word vectors)';
  out.hooks = config.hooks.size ? [...config.hooks.keys()].join(', ') : 'none';
  return out;
}

/** A URL without credentials, query or fragment (they may hold keys). */
function publicUrl(value: string): string {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/** An OpenAI-compatible embeddings service. */
export interface EmbeddingsConfig {
  url: string;
  model: string;
  key?: string;
  /** Requested dimensions (sent as `dimensions`); unset: whatever the model answers. */
  dims?: number;
}

/** `SATCHEL_EMBEDDINGS_URL` and `SATCHEL_EMBEDDINGS_MODEL` go together; the key and dims are optional. */
function parseEmbeddings(env: Env, dims: number): EmbeddingsConfig {
  if (!env.SATCHEL_EMBEDDINGS_URL || !env.SATCHEL_EMBEDDINGS_MODEL) {
    throw new ConfigError(
      'SATCHEL_EMBEDDINGS_URL and SATCHEL_EMBEDDINGS_MODEL must be set together',
    );
  }
  // The client posts to `{url}/embeddings` (lib/search/embed.ts): a query would end up before that path.
  const url = serviceUrl(
    env.SATCHEL_EMBEDDINGS_URL,
    'SATCHEL_EMBEDDINGS_URL',
    false,
    '/embeddings',
  );
  return {
    url: url.href.replace(/\/+$/, ''),
    model: env.SATCHEL_EMBEDDINGS_MODEL,
    ...(env.SATCHEL_EMBEDDINGS_KEY
      ? { key: sendableKey(env.SATCHEL_EMBEDDINGS_KEY, 'SATCHEL_EMBEDDINGS_KEY') }
      : {}),
    ...(dims ? { dims } : {}),
  };
}

/**
 * A key sent as `Authorization: Bearer <key>`: visible ASCII, no spaces (a pasted curly dash or a line
 * break made every call fail as "could not be reached", with nothing said at start).
 */
function sendableKey(key: string, name: string): string {
  if (!/^[!-~]+$/.test(key)) throw new ConfigError(`${name} must be visible ASCII with no spaces`);
  return key;
}

/**
 * The http(s) URL of a service the server calls. Credentials in it (`https://user:key@host`) are refused:
 * fetch will not send a request to such a URL, so every call would fail; the key has its own variable.
 * A fragment is never sent; a query only where the client keeps it (`query`). A path ending in the
 * `suffix` the client appends (the full endpoint, as providers show it) is refused too: it would be doubled.
 */
function serviceUrl(value: string, name: string, query: boolean, suffix: string): URL {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // refused below
  }
  if (
    !url ||
    !/^https?:$/.test(url.protocol) ||
    url.username ||
    url.password ||
    value.includes('#') ||
    (!query && value.includes('?'))
  )
    throw new ConfigError(
      `${name} must be an http(s) URL without user:password@ (the key goes in ` +
        `${name.replace(/_URL$/, '_KEY')}), #fragment${query ? '' : ' or ?query'}`,
    );
  if (url.pathname.replace(/\/+$/, '').endsWith(suffix))
    throw new ConfigError(`${name} must not end in ${suffix} (Satchel adds it)`);
  return url;
}

/** The continue model, from `SATCHEL_MODEL_*`: URL and model go together. */
function parseModel(env: Env, limits: ReturnType<typeof modelLimits>): ModelConfig {
  if (!env.SATCHEL_MODEL_URL)
    throw new ConfigError('SATCHEL_MODEL is set but SATCHEL_MODEL_URL is not; set both or neither');
  if (!env.SATCHEL_MODEL)
    throw new ConfigError('SATCHEL_MODEL_URL is set but SATCHEL_MODEL is not; set both or neither');
  // A query (Azure OpenAI's `?api-version=`) is kept: it follows the path `{url}/chat/completions`.
  const url = serviceUrl(env.SATCHEL_MODEL_URL, 'SATCHEL_MODEL_URL', true, '/chat/completions');
  return {
    url: `${url.origin}${url.pathname.replace(/\/+$/, '')}${url.search}`,
    model: env.SATCHEL_MODEL!,
    ...(env.SATCHEL_MODEL_KEY
      ? { key: sendableKey(env.SATCHEL_MODEL_KEY, 'SATCHEL_MODEL_KEY') }
      : {}),
    provider: env.SATCHEL_MODEL_PROVIDER || url.hostname,
    ...limits,
  };
}

/** The continue model's numbers (`SATCHEL_MODEL_TIMEOUT_MS`, `_CONTEXT_BYTES`, `SATCHEL_CONTINUE_WAIT_MS`). */
function modelLimits(env: Env): Pick<ModelConfig, 'timeoutMs' | 'contextBytes' | 'waitMs'> {
  return {
    timeoutMs: parseIntVar(
      env,
      'SATCHEL_MODEL_TIMEOUT_MS',
      120_000,
      100,
      // Node's fetch gives up on an answer after 300 s (undici's header and body timeouts) whatever the
      // deadline: a longer one could not be kept.
      300_000,
    ),
    contextBytes: parseIntVar(env, 'SATCHEL_MODEL_CONTEXT_BYTES', 256 * 1024, 1024, 2 ** 31),
    waitMs: parseIntVar(env, 'SATCHEL_CONTINUE_WAIT_MS', 5000, 0, 60_000),
  };
}

/**
 * Whether a configured secret is redacted by value: 12 characters or more, with a letter and a digit. A
 * shorter one, or words alone (`lm-studio`, `sk-no-key-required`: local servers' documented any-value
 * keys), could be ordinary text of any session, and would be destroyed there.
 */
const looksLikeKey = (v: string) => v.length >= 12 && /\d/.test(v) && /[a-z]/i.test(v);

/**
 * `SatchelConfig.secrets`: read after the variables they come from have been checked. `tokens`: the plain
 * tokens of SATCHEL_TOKENS (parseTokens), without `:ro` or `:rw`, the form a client sends.
 */
function configSecrets(
  env: Env,
  hooks: ReadonlyMap<string, HookConfig>,
  tokens: string[],
): string[] {
  const values = [
    env.SATCHEL_MODEL_KEY,
    env.SATCHEL_EMBEDDINGS_KEY,
    env.AWS_SECRET_ACCESS_KEY,
    env.AWS_SESSION_TOKEN,
    ...[...hooks.values()].map((h) => h.secret),
    ...tokens,
  ];
  return [...new Set(values.filter((v): v is string => !!v && looksLikeKey(v)))];
}

/**
 * Parses `namespace[/device]=token[:ro|:rw]` entries, comma-separated; the plain tokens (not given as
 * `sha256:`) go in `plain`.
 */
export async function parseTokens(spec: string, plain: string[] = []): Promise<TokenEntry[]> {
  const entries = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const out: TokenEntry[] = [];
  for (const [i, entry] of entries.entries()) {
    const eq = entry.indexOf('=');
    if (eq <= 0)
      throw new ConfigError(`SATCHEL_TOKENS entry ${i + 1} is not namespace[/device]=token[:ro]`);
    const who = entry.slice(0, eq);
    let token = entry.slice(eq + 1);
    // `:rw` says what no suffix means (read and write); it is not part of the token.
    const readOnly = token.endsWith(':ro');
    if (readOnly || token.endsWith(':rw')) token = token.slice(0, -3);
    // `:RO` was kept as part of a read-write token (review s62g); a token that ends so is given as sha256:.
    else if (/:r[ow]$/i.test(token))
      throw new ConfigError(`SATCHEL_TOKENS entry ${i + 1}: write the suffix as :ro or :rw`);
    const [namespace, device, extra] = who.split('/');
    if (!namespace || !isValidNamespace(namespace) || extra !== undefined || device === '') {
      throw new ConfigError(
        `SATCHEL_TOKENS entry ${i + 1}: namespace must be 1-64 of [A-Za-z0-9._-]`,
      );
    }
    // What a client can send after `Bearer ` (RFC 6750's token68 is narrower; any visible ASCII is read).
    if (!/^[!-~]+$/.test(token))
      throw new ConfigError(
        `SATCHEL_TOKENS entry ${i + 1}: a token is 1 or more visible ASCII characters, no spaces`,
      );
    let digest: Uint8Array;
    if (token.startsWith('sha256:')) {
      const hex = token.slice(7);
      if (!/^[0-9a-fA-F]{64}$/.test(hex))
        throw new ConfigError(`SATCHEL_TOKENS entry ${i + 1}: sha256: needs 64 hex digits`);
      digest = Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)));
    } else {
      plain.push(token);
      digest = await sha256(token);
    }
    // The device labels what its writes store (an external ref's created_by: 1-128 characters).
    if (device && device.length > 128)
      throw new ConfigError(
        `SATCHEL_TOKENS entry ${i + 1}: the device label is over 128 characters`,
      );
    // Auth takes the first entry whose digest matches: a token listed twice would give every caller that
    // holds it the first entry's namespace and scope, whatever the later entry says.
    const twin = out.findIndex((e) => e.digest.every((b, j) => b === digest[j]));
    if (twin >= 0)
      throw new ConfigError(
        `SATCHEL_TOKENS entries ${twin + 1} and ${i + 1} have the same token; give each caller its own`,
      );
    out.push({ namespace, device: device ?? `device-${i + 1}`, readOnly, digest });
  }
  // Set but listing no one (`,`): a server that refuses every caller, saying no tokens are configured.
  if (out.length === 0)
    throw new ConfigError(
      'SATCHEL_TOKENS holds no namespace[/device]=token entry; unset it for open mode',
    );
  return out;
}

/**
 * Parses `SATCHEL_HOOKS`: JSON `{name: {secret, namespace, session}}`. Errors name the hook and the field,
 * never a secret. `open`: the namespaces a token opens (open mode: `default`), one of which a hook's must be.
 */
export function parseHooks(
  value: string | undefined,
  open?: string[],
): ReadonlyMap<string, HookConfig> {
  const hooks = new Map<string, HookConfig>();
  if (value === undefined || value.trim() === '') return hooks;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = null; // not JSON: the same answer as JSON that is not an object
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(
      'SATCHEL_HOOKS must be a JSON object: {"name": {"secret", "namespace", "session"}}',
    );
  }
  for (const [name, entry] of Object.entries(parsed)) {
    const where = `SATCHEL_HOOKS ${JSON.stringify(name.slice(0, 64))}`;
    // Hook names use the namespace alphabet: they are URL path segments and parts of keys and labels.
    if (!isValidNamespace(name))
      throw new ConfigError(
        `${where}: a hook name is 1-64 of [A-Za-z0-9._-], not starting with "."`,
      );
    const { secret, namespace, session, ...rest } = (
      typeof entry === 'object' && entry !== null ? entry : {}
    ) as Record<string, unknown>;
    // Whoever guesses it can sign deliveries, and tell the id of a `new` session before it exists.
    if (typeof secret !== 'string' || secret.length < 16)
      throw new ConfigError(`${where}: secret must be a string of 16 characters or more`);
    if (typeof namespace !== 'string' || !isValidNamespace(namespace))
      throw new ConfigError(`${where}: namespace must be 1-64 of [A-Za-z0-9._-]`);
    if (
      typeof session !== 'string' ||
      !(session === 'latest' || session === 'new' || isValidSessionId(session))
    ) {
      throw new ConfigError(`${where}: session must be a session id, "latest" or "new"`);
    }
    const unknown = Object.keys(rest);
    if (unknown.length > 0)
      throw new ConfigError(`${where}: unknown field ${JSON.stringify(unknown[0]!.slice(0, 64))}`);
    // Stored where no token reads (a typo, or not `default` in open mode), its sessions reach no one.
    if (open && !open.includes(namespace))
      throw new ConfigError(
        `${where}: no SATCHEL_TOKENS entry opens namespace "${namespace}" ` +
          `(open: ${[...new Set(open)].join(', ')})`,
      );
    hooks.set(name, { secret, namespace, session });
  }
  return hooks;
}

/**
 * The fetch spec's "bad ports", space-separated: fetch (undici, so the CLI and the client) and every
 * browser refuse them before connecting, so a server there would answer curl but never the CLI or /ui.
 */
const BAD_PORTS =
  ' 1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110 111 113 115 117 ' +
  '119 123 135 137 139 143 161 179 389 427 465 512 513 514 515 526 530 531 532 540 548 554 556 563 587 601 ' +
  '636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190 5060 5061 6000 6566 6665 6666 6667 6668 6669 ' +
  '6679 6697 10080 ';

/**
 * The Node server's PORT: not one fetch and browsers refuse (the entry refuses it at start). Not part of
 * loadConfig: a Lambda or a Worker listens on no PORT (until review s59i a Lambda with PORT=6000 in its
 * environment failed its init).
 */
export function checkPort(port: number): void {
  if (BAD_PORTS.includes(` ${port} `))
    throw new ConfigError(
      `PORT ${port} is one of the ports fetch and browsers refuse to connect to ` +
        '(the fetch spec\'s "bad ports"): the CLI, the client and /ui could not reach it; choose another',
    );
}

/** `env[name]`, an integer from `min` to `max`; `fallback` when unset or empty. */
function parseIntVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  // Decimal digits only: Number() also takes `0x50`, `1e6` and `0b1`, which nobody means in a port or a size.
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

function parseStringArray(value: string | undefined, name: string): string[] {
  if (value === undefined || value.trim() === '') return [];
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed) && parsed.every((v) => typeof v === 'string')) return parsed;
  } catch {
    // fall through to the error
  }
  throw new ConfigError(`${name} must be a JSON array of strings`);
}

/** `SATCHEL_REDACT_VALUES`: a value too short to redact is refused, not silently ignored. */
function parseRedactValues(value: string | undefined): string[] {
  const values = parseStringArray(value, 'SATCHEL_REDACT_VALUES');
  if (values.some((v) => v.length < MIN_KNOWN_VALUE))
    throw new ConfigError(
      `SATCHEL_REDACT_VALUES values must be at least ${MIN_KNOWN_VALUE} characters long`,
    );
  return values;
}

function parseBool(value: string | undefined, name: string, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (/^(1|true|yes)$/i.test(value)) return true;
  if (/^(0|false|no)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false`);
}
