// On a plain-http page (no secure context) `crypto.subtle` and `crypto.randomUUID` are undefined;
// `crypto.getRandomValues` is there. The AI SDK adapter hashed its key with crypto.subtle and the Agents
// SDK adapter keyed its appends with crypto.randomUUID, so both threw there, though docs/client.md
// promises keyed writes on such pages. Both are hidden here for the duration of each save.
import type { UIMessage } from 'ai';
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadUIMessages, saveUIMessages } from '../../lib/adapters/ai-sdk.js';
import { SatchelSession } from '../../lib/adapters/openai-agents.js';
import { sha256Hex } from '../../lib/adapters/sha256.js';
import { SatchelClient } from '../../lib/client/index.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

let server: RunningServer;
let client: SatchelClient;
const keys: string[] = [];
beforeAll(async () => {
  server = await startSatchelServer();
  client = new SatchelClient({
    url: server.url,
    fetch: (input, init) => {
      const key = new Headers(init?.headers).get('idempotency-key');
      if (key) keys.push(key);
      return fetch(input, init);
    },
  });
});
afterAll(() => server?.close());

/** Hides crypto.subtle and crypto.randomUUID (prototype members) behind own properties, as on http pages. */
function insecureContext(): void {
  for (const name of ['subtle', 'randomUUID'])
    Object.defineProperty(globalThis.crypto, name, { value: undefined, configurable: true });
}
afterEach(() => {
  for (const name of ['subtle', 'randomUUID'])
    delete (globalThis.crypto as unknown as Record<string, unknown>)[name];
});

describe('adapters without a secure context (crypto.subtle and crypto.randomUUID undefined)', () => {
  it('AI SDK: saveUIMessages stores the chat, keyed as before', async () => {
    const messages: UIMessage[] = [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'over plain http' }] },
      { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'stored' }] },
    ];
    keys.length = 0;
    insecureContext();
    expect(globalThis.crypto.subtle).toBeUndefined();
    expect(await saveUIMessages(client, 'plain-http-chat', messages, { known: [] })).toEqual({
      appended: 2,
    });
    expect(await loadUIMessages(client, 'plain-http-chat')).toEqual(messages);
    // The same key as the Web Crypto hash gave: a retry across versions is still a replay.
    const digest = createHash('sha256').update(JSON.stringify(['plain-http-chat', ['u1', 'a1']]));
    expect(keys).toContain(`ai-sdk-${digest.digest('hex')}`);
  });

  it('Agents SDK: addItems stores the items with a v4 UUID key', async () => {
    keys.length = 0;
    insecureContext();
    const session = new SatchelSession({ client, sessionId: 'plain-http-agents' });
    await session.addItems([{ role: 'user', content: 'over plain http' }]);
    expect(await session.getItems()).toEqual([{ role: 'user', content: 'over plain http' }]);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys)
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('the plain SHA-256 matches Node’s on multi-block and non-ASCII input', () => {
    for (const text of [
      '',
      'abc',
      'a'.repeat(55),
      'a'.repeat(56),
      'a'.repeat(64),
      'é😀'.repeat(300),
    ])
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text).digest('hex'));
  });
});
