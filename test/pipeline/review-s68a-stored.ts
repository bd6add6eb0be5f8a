// Review s68a's leak tests: POST a session over HTTP to a local store, drain the background work, and
// answer the stored files (session, index records, manifest log) that still hold one of the secrets.
import { makeApp, settleAll } from '../http/helpers.js';
import { holders } from '../support/holders.js';

export async function storedSecrets(body: unknown, secrets: string[]): Promise<string[]> {
  const app = await makeApp();
  const made = await app.call('POST', '/v1/sessions', { body });
  if (made.status !== 201) throw new Error(`${made.status} ${made.text}`);
  await settleAll(app);
  return holders(app.dir, secrets);
}

/** A bash tool call per command, each answered with the command echoed (as shells and tools do). */
export function bashCalls(commands: string[]): unknown[] {
  return commands.flatMap((command, i) => [
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        {
          id: `call_${i}`,
          type: 'function',
          function: { name: 'bash', arguments: JSON.stringify({ command }) },
        },
      ],
    },
    { role: 'tool', tool_call_id: `call_${i}`, content: `$ ${command}\nok` },
  ]);
}
