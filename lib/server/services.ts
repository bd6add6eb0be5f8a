import { Continuer } from '../continue/continue.js';
import { appendMessage, WebhookReceiver, type Deliver } from '../hooks/hooks.js';
import { describeError, type Logger } from '../model/log.js';
import { defaultPipeline } from '../pipeline/default.js';
import { createRedactor, type Redactor } from '../pipeline/redact.js';
import type { SaveInput, SavePipeline } from '../pipeline/save.js';
import { HttpEmbedder, type Embedder } from '../search/embed.js';
import { SearchEngine } from '../search/engine.js';
import { runSessionSearch } from '../search/tool.js';
import { AuditLog } from '../sessions/audit.js';
import type { ManifestOptions } from '../sessions/manifest.js';
import { SessionStore } from '../sessions/store.js';
import type { ObjectStore } from '../storage/port.js';
import { Background } from './background.js';
import { createServerLogger, type SatchelConfig } from './config.js';

export interface ServiceOptions {
  config: SatchelConfig;
  objects: ObjectStore;
  sessions?: SessionStore;
  log?: Logger;
  /** Memory for cached sessions (default: 4 × the session cap, at most 256 MiB; Workers pass less). */
  cacheBytes?: number;
  /** The embedder (default: from config.embeddings, else none: lexical search only). */
  embedder?: Embedder | null;
  /**
   * The runtime may freeze between requests (Workers, Lambda): a session's standing pending marker goes
   * in the write's own background work rather than after 30 idle seconds, and log and audit records do
   * not linger to be batched.
   */
  shortLived?: boolean;
  /**
   * The runtime answers only once its background work is done (Lambda): a webhook's 202 can then say
   * that its message was stored, and a delivery that could not be stored answers 503 instead.
   */
  answersAfterBackground?: boolean;
  /** SessionStoreOptions.cleanupBatch: Workers, whose requests have a budget of storage operations. */
  cleanupBatch?: number;
  /**
   * Each request may make only so many storage operations (Workers: 1,000, background included): reads of
   * the manifest and the audit log fold a backlog a slice per request instead of reading it whole.
   */
  operationBudget?: boolean;
}

/** Everything a request may use, built once per process from a config object and a store. */
export interface Services {
  config: SatchelConfig;
  objects: ObjectStore;
  sessions: SessionStore;
  search: SearchEngine;
  continuer: Continuer;
  webhooks: WebhookReceiver;
  background: Background;
  log: Logger;
  /** The save pipeline's redaction of a text, with a request's own secret values. */
  redact: SavePipeline['redactText'];
  /** ServiceOptions.answersAfterBackground. */
  answersAfterBackground: boolean;
}

/** Workers allow 1,000 storage operations per request: a read GETs at most 250 audit objects (s60b). */
const SHORT_AUDIT = { readAtMost: 250, slicesPerRead: 2 };

/** How long Cloudflare lets a request's `waitUntil` work run after its response. */
const WAIT_UNTIL_MS = 30_000;

/** Builds the services: session store (with audit, manifest and the save pipeline), search, continue, webhooks. */
export function buildServices(options: ServiceOptions): Services {
  // Without a logger of the caller's, the process's own: every line through the redactor.
  const log = options.log ?? createServerLogger(options.config);
  const { config, objects } = options;
  const cacheBytes = options.cacheBytes ?? Math.min(256 * 1024 * 1024, 4 * config.maxSessionBytes);
  const pipeline = configuredPipeline(config);
  const sessions =
    options.sessions ??
    new SessionStore(objects, {
      pipeline,
      cacheBytes,
      // A long-lived server lets its next commit to a session answer the check after its records.
      ...(options.shortLived
        ? { markerIdleMs: 0, recordLingerMs: 0, groupCommit: false }
        : { existenceLingerMs: 2000 }),
      manifest: manifestOptions(cacheBytes, options.operationBudget === true),
      audit: new AuditLog(objects, pipeline.redactText, options.operationBudget ? SHORT_AUDIT : {}),
      ...(options.cleanupBatch ? { cleanupBatch: options.cleanupBatch } : {}),
      onError: (what, err) => log.warn(what, { error: describeError(err) }),
    });
  const background = new Background(log);
  background.onDrain(() => sessions.settled());
  // A check after a record that lands during a drain runs at once, not after its wait (existence.ts).
  background.whileDraining(() => sessions.existence.hurry());
  // Without an embeddings service the search is lexical: the built-in hashing embedder (LocalEmbedder)
  // ranks below BM25 on Cranfield and fusing it did not beat BM25 alone (bench/results.eval.json).
  const onEmbeddingsError = (err: unknown, waitMs: number) =>
    log.warn(`embeddings call failed; lexical search for ${waitMs / 1000} s`, {
      error: describeError(err),
    });
  const embedder =
    options.embedder !== undefined
      ? options.embedder
      : config.embeddings
        ? new HttpEmbedder({ ...config.embeddings, onError: onEmbeddingsError })
        : null;
  const search = new SearchEngine(sessions, embedder, {
    // A short-lived runtime's save does not wait for the embeddings service: a search's compaction embeds.
    ...(options.shortLived ? { recordLingerMs: 0, embedOnSave: false } : {}),
    // Workers: a search far behind folds the index a slice per request, never a scan of every session.
    operationBudget: options.operationBudget === true,
    onError: (what, err) => log.warn(what, { error: describeError(err) }),
  });
  sessions.addListener(search);
  background.onDrain(() => search.flushRecords());
  // Short-lived without answering after its background work: Workers, whose waitUntil ends after 30 s.
  const workers = options.shortLived === true && options.answersAfterBackground !== true;
  // The model turn's session_search calls run here, in the caller's namespace, on the indexed path.
  const continuer = new Continuer({
    sessions,
    objects,
    model: config.model,
    log,
    ...(workers ? { backgroundMs: WAIT_UNTIL_MS } : {}),
    search: (ns, input, schedule) =>
      runSessionSearch(sessions, ns, input, search, {
        schedule: schedule ?? ((w) => background.track(w)),
      }),
  });
  const webhooks = new WebhookReceiver({
    hooks: config.hooks,
    sessions,
    deliver: hookDeliver(options, sessions, continuer),
    log,
    redact: pipeline.redactText,
    maxSessionBytes: config.maxSessionBytes,
  });
  return {
    config,
    objects,
    sessions,
    search,
    continuer,
    webhooks,
    background,
    log,
    redact: pipeline.redactText,
    answersAfterBackground: options.answersAfterBackground === true,
  };
}

/**
 * How a webhook continues its session: with a model configured, the stored message gets a model turn.
 * After the 202 nobody waits for it, and its turn waits for the session's lease as long as one lives;
 * Lambda's sender waits for the answer, which a client's continue bounds (SATCHEL_CONTINUE_WAIT_MS).
 */
function hookDeliver(
  options: ServiceOptions,
  sessions: SessionStore,
  continuer: Continuer,
): Deliver {
  if (!options.config.model) return appendMessage(sessions);
  if (options.answersAfterBackground)
    return (ns, id, message, ctx, progress) =>
      continuer.run(ns, id, { message: message.content }, undefined, ctx, progress);
  return (ns, id, message, ctx, progress) => continuer.deliver(ns, id, message, ctx, progress);
}

/** The manifest's options: its page cache shares the session cache's memory; a budget bounds reads. */
function manifestOptions(cacheBytes: number, budget: boolean): ManifestOptions {
  return {
    // About 500 bytes of memory per cached entry.
    pageCacheEntries: Math.max(10_000, Math.floor(cacheBytes / 512)),
    // A Worker's request may make 1,000 storage operations: a reader folds a backlog of log records in
    // slices (600 a request) rather than reading it whole, and answers 503 while over 300 (review s60b).
    ...(budget ? { maxSyncLogs: 300 } : {}),
  };
}

/**
 * The save pipeline: the rules and `SATCHEL_REDACT_VALUES`, whose fingerprint marks what a stored session
 * was scanned under (a change rescans every session on its next save), and the configuration's own secrets
 * (`config.secrets`), which stay out of it: they change with every key rotation, and differ between the
 * processes sharing a bucket (a Worker and a Node server; a Lambda's temporary AWS credentials). They are
 * redacted in everything a write scans (its new messages and fields: a model reply echoing its key), in
 * the same pass as the rules, in resent copies that hold one (`resentSecret`), and in free text (audit,
 * logs, ids).
 */
export function configuredPipeline(
  config: Pick<SatchelConfig, 'maxSessionBytes' | 'redactValues' | 'secrets'>,
): SavePipeline {
  const secrets = config.secrets ?? [];
  const base = defaultPipeline({
    maxSessionBytes: config.maxSessionBytes,
    knownValues: config.redactValues,
    unversionedValues: secrets,
  });
  if (secrets.length === 0) return base;
  const finder = createRedactor([], { knownValues: secrets });
  return {
    redactText: base.redactText,
    maxSessionBytes: base.maxSessionBytes,
    apply: (input) =>
      base.apply(
        resentSecret(finder, input)
          ? { ...input, knownValues: [...secrets, ...(input.knownValues ?? [])] }
          : input,
      ),
  };
}

/**
 * True when a write resends stored messages as copies (a PUT, an import), which the scan record proves
 * scanned without reading them, and one holds a configured secret: a process without it (another
 * runtime, older credentials) stored it. Such a write is scanned whole with the secrets, as with a
 * request's Satchel-Secrets. Creates and appends resend nothing, and cost nothing here.
 */
function resentSecret(finder: Redactor, { next, previous }: SaveInput): boolean {
  if (!previous) return false;
  const stored = previous.messages;
  const copies = next.messages.slice(0, stored.length).filter((m, i) => m !== stored[i]);
  return copies.length > 0 && finder.redact(JSON.stringify(copies)).count > 0;
}
