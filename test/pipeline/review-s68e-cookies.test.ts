// Review s68e, F3: the cookie rules took the first word of any quoted prose under a `cookies` key (a
// cookie-consent banner's i18n file), as text and in structured tool-call arguments, and cookie
// attributes (`encoding`, `secure`) for cookies. A cookie value never holds a blank.
import { describe, expect, it } from 'vitest';
import { makeApp, settleAll } from '../http/helpers.js';
import { redact } from './review-s63f-stored.js';

const banner = {
  cookies: {
    title: 'Cookie settings',
    description: 'Functionality cookies remember your choices',
    analytics: 'Performance measurement',
  },
};

/** Stores a session of `messages` over HTTP on a local store and answers its stored messages. */
async function stored(messages: unknown[]) {
  const app = await makeApp();
  const made = await app.call('POST', '/v1/sessions', {
    body: { task: 'cookie banner', messages },
  });
  expect(made.status).toBe(201);
  await settleAll(app);
  const got = await app.call('GET', `/v1/sessions/${JSON.parse(made.text).id}`);
  return JSON.parse(got.text).messages as {
    content: string;
    tool_calls?: { function: { arguments: string } }[];
  }[];
}

const ask = { role: 'user', content: 'add a cookie banner' };
const call = (name: string, args: unknown) => ({
  role: 'assistant',
  content: '',
  tool_calls: [{ id: 'c1', type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});

describe('prose under a cookies key', () => {
  it('an i18n file read by a tool is stored unchanged', async () => {
    const content = `$ cat src/i18n/en.json\n${JSON.stringify(banner, null, 2)}\n`;
    const messages = await stored([
      ask,
      call('bash', { command: 'cat src/i18n/en.json' }),
      { role: 'tool', tool_call_id: 'c1', content },
    ]);
    expect(messages[2]!.content).toBe(content);
  });

  it('the same object as tool-call arguments is stored unchanged', async () => {
    const args = { path: 'src/i18n/en.json', ...banner };
    const messages = await stored([
      ask,
      call('write_i18n', args),
      { role: 'tool', tool_call_id: 'c1', content: 'written' },
    ]);
    expect(JSON.parse(messages[1]!.tool_calls![0]!.function.arguments)).toEqual(args);
  });

  it('prose and cookie attributes in code keep their words', () => {
    for (const text of [
      'cookies: { essential: "Authentication/session-handling required", marketing: "Advertising partners" }',
      'module.exports = { cookies: { prefix: "__Host-", secure: "true", httpOnly: "true", encoding: "base64url" } }',
    ])
      expect(redact(text)).toBe(text);
  });

  it('a cookie value beside them is still redacted', () => {
    const v = 'k3vq9zt8rm2wxy7nb4cl1pd6sf0gh5jq';
    expect(redact(`{"cookies": {"title": "Cookie settings", "sessionid": "${v}"}}`)).toBe(
      '{"cookies": {"title": "Cookie settings", "sessionid": "[REDACTED]"}}',
    );
  });
});
