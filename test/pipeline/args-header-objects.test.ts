// Review s52f (2026-12-06), fixed the same day; this test failed on the code before the fix.
// Tool-call arguments that are JSON are redacted string by string (redactArguments/redactJson,
// lib/pipeline/save.ts): a header's name is a key and its value another string, so the rules that find a
// secret by its header name (`http-cookie`, `http-secret-header` in lib/pipeline/rules.ts) never see the
// two together, and names outside SENSITIVE_KEY (`Cookie`, `Ocp-Apim-Subscription-Key`, `x-functions-key`)
// keep their values. The very same JSON as message text (a tool's output) is redacted. An http tool call
// with a headers object is the most common way an agent sends these.
import { expect, it } from 'vitest';
import { makeApp } from '../http/helpers.js';
import { holders } from '../support/holders.js';

const COOKIE = 'sessionid=Kp9dL2mQ7vX4zR8tB3nW6yHc';
const SUBSCRIPTION = '7f3a9c1e5b2d48f6a0c7e9b1d3f5a2c8';
const FUNCTIONS = 'Zq8xW3vN5mT1pL6rK9sD2fG4hJ7kLm0Qa1==';
const headers = {
  Cookie: COOKIE,
  'Ocp-Apim-Subscription-Key': SUBSCRIPTION,
  'x-functions-key': FUNCTIONS,
};
const needles = [COOKIE.slice(10), SUBSCRIPTION, FUNCTIONS.slice(0, 20)];

async function store(messages: unknown[]) {
  const app = await makeApp();
  const r = await app.call('POST', '/v1/sessions', { body: { task: 't', messages } });
  expect(r.status).toBe(201);
  await app.sessions.settled();
  return holders(app.dir, needles);
}

it('the headers as tool output text are redacted (control)', async () => {
  const text = JSON.stringify({ url: 'https://api.example.com/v1/items', headers }, null, 2);
  expect(
    await store([
      { role: 'user', content: 'x' },
      { role: 'tool', tool_call_id: 'c1', content: text },
    ]),
  ).toEqual([]);
});

it("the same headers in an http tool call's JSON arguments are redacted too", async () => {
  const args = JSON.stringify({ method: 'GET', url: 'https://api.example.com/v1/items', headers });
  expect(
    await store([
      { role: 'user', content: 'list the items' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'http_request', arguments: args } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '200 OK' },
    ]),
  ).toEqual([]);
});
