// An OpenAI Agents SDK agent whose conversation lives in Satchel: run it twice with the same session id
// (from two machines, say) and the second run remembers the first.
//   SATCHEL_URL, SATCHEL_TOKEN: the Satchel server
//   MODEL_URL, MODEL, MODEL_KEY: any OpenAI-compatible chat completions endpoint
//   npx tsx openai-agents.ts <session id> "<what to ask>"
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { SatchelClient } from 'satchel';
import { SatchelSession } from 'satchel/openai-agents';
import * as z from 'zod';

setTracingDisabled(true); // traces would go to OpenAI's dashboard

const client = new SatchelClient({
  url: process.env.SATCHEL_URL ?? 'http://127.0.0.1:8787',
  token: process.env.SATCHEL_TOKEN,
});
const model = new OpenAIChatCompletionsModel(
  new OpenAI({ baseURL: process.env.MODEL_URL, apiKey: process.env.MODEL_KEY ?? 'none' }),
  process.env.MODEL ?? 'gpt-4o-mini',
);
const weather = tool({
  name: 'weather',
  description: 'The current weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}, 21 °C`,
});
const agent = new Agent({ name: 'helper', instructions: 'Be brief.', model, tools: [weather] });

const [sessionId = 'agents-example', question = 'What is the weather in Oslo?'] =
  process.argv.slice(2);
const session = new SatchelSession({
  client,
  sessionId,
  task: 'Weather helper',
  metadata: { app: 'examples' },
});
const result = await run(agent, question, { session });
console.log(
  JSON.stringify({ answer: result.finalOutput, items: (await session.getItems()).length }),
);
