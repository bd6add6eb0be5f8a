// Review s68a, F2: session cookies in structured form (a Playwright storage state's `{name, value}` pairs,
// a tool call's `cookies` object) were stored in clear, where the same cookie in a `Cookie:` header is not.
import { describe, expect, it } from 'vitest';
import { redact } from './review-s63f-stored.js';
import { storedSecrets } from './review-s68a-stored.js';

const STATE = 'k3vq9zt8rm2wxy7nb4cl1pd6sf0gh5jq'; // in a Playwright storageState.json
const ARGS = 'p8wn2xq7rt4ylm9vb3kc6zd1sf5gh0ja'; // in a tool call's cookies object
const HEADER = 'z5mb8qk2wx7rt4yn9vc3ld6pf1sg0hja'; // the control: a Cookie header

const call = (id: string, name: string, args: unknown) => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

describe('structured cookies', () => {
  it('a storage state and a cookies object reach no stored object, as a Cookie header', async () => {
    const state = JSON.stringify(
      {
        cookies: [
          {
            name: 'sessionid',
            value: STATE,
            domain: 'admin.acme.com',
            path: '/',
            expires: 1799999999,
            httpOnly: true,
            secure: true,
            sameSite: 'Lax',
          },
        ],
        origins: [],
      },
      null,
      2,
    );
    const curl = `curl -H 'Cookie: sessionid=${HEADER}' https://admin.acme.com/orders`;
    const body = {
      task: 'check the admin page',
      messages: [
        { role: 'user', content: 'log in to the admin and check the orders page' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            call('c1', 'bash', { command: 'cat storageState.json' }),
            call('c2', 'http_request', {
              url: 'https://admin.acme.com/orders',
              cookies: { sessionid: ARGS },
            }),
            call('c3', 'bash', { command: curl }),
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: state },
        { role: 'tool', tool_call_id: 'c2', content: '{"orders":[]}' },
        { role: 'tool', tool_call_id: 'c3', content: '{"orders":[]}' },
      ],
    };
    expect(await storedSecrets(body, [STATE, ARGS, HEADER])).toEqual([]);
  });

  it('document.cookie, add_cookies and a cookies dict in code', () => {
    for (const text of [
      `document.cookie = "sessionid=${ARGS}; path=/"`,
      `page.context.add_cookies([{"name": "sid", "value": "${ARGS}", "domain": "acme.com"}])`,
      `requests.get(url, cookies={"sessionid": "${ARGS}"})`,
    ])
      expect(redact(text), text).not.toContain(ARGS);
  });

  it("a cookie's name and attributes, and low-entropy values, are kept", () => {
    const text = JSON.stringify({
      cookies: [{ name: 'theme', value: 'dark', domain: 'acme.com', path: '/', sameSite: 'Lax' }],
    });
    expect(redact(text)).toBe(text);
    const prefs = JSON.stringify({ cookies: { consent: 'yes', lang: 'en-US' } });
    expect(redact(prefs)).toBe(prefs);
  });
});
