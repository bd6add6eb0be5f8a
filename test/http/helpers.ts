import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Env } from '../../lib/server/config.js';
import { createApp } from '../../lib/http/app.js';
import { LocalStore } from '../../lib/storage/local.js';
import type { ObjectStore } from '../../lib/storage/port.js';
import { listAll } from '../../lib/storage/prefix.js';
import { captureLogs } from '../support/logs.js';
import { SatchelClient } from '../../lib/client/index.js';

export const TOKENS = {
  laptop: 'tok_alice_laptop_0123456789',
  phone: 'tok_alice_phone_0123456789',
  ci: 'tok_alice_ci_readonly_0123',
  bob: 'tok_bob_0123456789abcdef',
};

/** sha256 hex of a string, for the `sha256:` token form. */
export async function sha256hex(s: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s));
  return Buffer.from(d).toString('hex');
}

/**
 * An app on a real local folder (or the given store), with alice (laptop, phone, read-only ci) and bob.
 * Its log lines are captured in `logs` (printed only when a test fails), so tests assert the errors they provoke.
 */
export async function makeApp(
  options: {
    env?: Env;
    objects?: ObjectStore;
    allowOpen?: boolean;
    shortLived?: boolean;
    answersAfterBackground?: boolean;
  } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'satchel-http-'));
  const env: Env = {
    SATCHEL_TOKENS: `alice/laptop=${TOKENS.laptop},alice/phone=${TOKENS.phone},alice/ci=${TOKENS.ci}:ro,bob=sha256:${await sha256hex(TOKENS.bob)}`,
    ...options.env,
  };
  const config = await loadConfig(env, 'local');
  const objects = options.objects ?? new LocalStore(dir);
  const logs = captureLogs();
  const built = createApp({
    config,
    objects,
    allowOpen: options.allowOpen ?? false,
    log: logs,
    ...(options.shortLived ? { shortLived: true } : {}),
    ...(options.answersAfterBackground ? { answersAfterBackground: true } : {}),
  });
  const call = async (
    method: string,
    path: string,
    init: {
      token?: string | null;
      body?: unknown;
      raw?: string;
      headers?: Record<string, string>;
    } = {},
  ) => {
    const headers: Record<string, string> = { ...init.headers };
    const token = init.token === undefined ? TOKENS.laptop : init.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined = init.raw;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await built.app.fetch(
      new Request(`http://localhost${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
      }),
    );
    const text = await res.text();
    let json: any = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json, text };
  };
  return { ...built, dir, objects, call, logs };
}

/**
 * An app whose model is at `modelUrl`, a session of a greeting and its answer in it, and one continue of
 * that session with `message`: the app (its log) and the continue's answer.
 */
export async function continueOnce(modelUrl: string, message: string) {
  const app = await makeApp({ env: { SATCHEL_MODEL_URL: modelUrl, SATCHEL_MODEL: 'm' } });
  const messages = [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
  ];
  const id = (await app.call('POST', '/v1/sessions', { body: { task: 't', messages } })).json.id;
  const res = await app.call('POST', `/v1/sessions/${id}/continue`, { body: { message } });
  return { app, res };
}

/**
 * Waits until an app's background work has settled: its drain, the session store's records and the search
 * engine's lingering index records, a few times over (one round's work can schedule the next's).
 */
export async function settleAll(app: {
  background: { drain(): Promise<void> };
  sessions: { settled(): Promise<void> };
  search: { flushRecords(): Promise<void> };
}): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await app.background.drain();
    await app.sessions.settled();
    await app.search.flushRecords();
  }
}

/**
 * Two sessions (tasks `one` and `two`) created in `alice` through an app over `store`, then the manifest
 * gone (the whole `m/` prefix, docs/design.md: the next list rebuilds it from the session objects); their ids.
 */
export async function twoSessionsManifestGone(store: ObjectStore): Promise<string[]> {
  const writer = await makeApp({ objects: store });
  const ids: string[] = [];
  for (const task of ['one', 'two']) {
    const made = await writer.call('POST', '/v1/sessions', { body: { task } });
    if (made.status !== 201) throw new Error(`create answered ${made.status}`);
    ids.push(made.json.id as string);
  }
  await settleAll(writer);
  await store.delete(await listAll(store, 'ns/alice/m/'));
  return ids;
}

/** Satchel's client on an app of its own (makeApp, a local folder), called in process: no retries. */
export async function inProcessClient(env: Record<string, string> = {}): Promise<SatchelClient> {
  const app = await makeApp({ env });
  return new SatchelClient({
    url: 'http://localhost',
    token: TOKENS.laptop,
    fetch: (input, init) => app.app.fetch(new Request(input as string, init)) as Promise<Response>,
    retry: { retries: 0 },
  });
}
