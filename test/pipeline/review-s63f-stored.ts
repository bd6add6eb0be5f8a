// Review s63f's leak tests: what a bucket reader finds after an agent's tool call is saved over HTTP.
import { expect } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

/** A password in everyday agent text: 16 characters, upper and lower case, digits. */
export const PW = 'hunter2Quux77Zed';

/** The production rules and walk over one string (no store). */
export const redact = (() => {
  const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });
  return (text: string) => pipeline.redactText(text);
})();

/**
 * Creates a session through POST /v1/sessions on a local store: a bash tool call running `command` (or the
 * call `command` when it is one), and `output` as its result (the command echoed, as shells and tools do).
 * Answers the stored files that hold one of `secrets`, as `path: secret`.
 */
export async function storedHolders(
  command: string | { name: string; arguments: string },
  output = `$ ${typeof command === 'string' ? command : command.name}\nok\n`,
  secrets = [PW],
): Promise<string[]> {
  const app = await makeApp();
  const call =
    typeof command === 'string'
      ? { name: 'bash', arguments: JSON.stringify({ command }) }
      : command;
  const res = await app.call('POST', '/v1/sessions', {
    body: {
      task: 'set things up',
      messages: [
        { role: 'user', content: 'please set it up' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'c1', type: 'function', function: call }],
        },
        { role: 'tool', tool_call_id: 'c1', content: output },
      ],
    },
  });
  expect(res.status).toBe(201);
  await settleAll(app);
  return holders(app.dir, secrets);
}
