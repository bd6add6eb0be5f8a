import { onTestFinished } from 'vitest';
import type { Env } from '../../lib/server/config.js';
import { listAll } from '../../lib/storage/prefix.js';
import { text, type ObjectStore } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { startChatServer, type Step } from './chat-server.js';
import { signedDelivery } from './hook-delivery.js';

/**
 * A webhook whose delivery runs a model turn, for the tests of what happens around that turn: alice's hook
 * `ci` on a scripted chat server (closed when the test finishes), on an app built Node-style or, with
 * `lambda`, as functions/lambda.ts builds it (`shortLived`, `answersAfterBackground`).
 */
export const HOOK_SECRET = 'ops-hook-secret-0123456789';
export const PAYLOAD = JSON.stringify({ type: 'deploy.failed', service: 'quokkaservice' });
export const REPLY = 'wombatreply: looking into the deploy';

export type App = Awaited<ReturnType<typeof makeApp>>;

export async function hookApp(options: {
  /** The hook's session: `new`, `latest` or a fixed id (default `ops-log`). */
  session?: string;
  lambda?: boolean;
  /** The model's script (without it: `during`, then REPLY to every request, three at the most). */
  steps?: Step[];
  /** What happens while the model runs the first turn, before it answers REPLY. */
  during?: (app: App) => Promise<unknown>;
  /** More environment beside the hook and the model. */
  env?: Env;
  objects?: ObjectStore;
  /** The body every delivery sends (default PAYLOAD). */
  payload?: string;
}) {
  const chat = await startChatServer();
  onTestFinished(() => chat.close());
  const env: Env = {
    SATCHEL_HOOKS: JSON.stringify({
      ci: { secret: HOOK_SECRET, namespace: 'alice', session: options.session ?? 'ops-log' },
    }),
    SATCHEL_MODEL_URL: chat.url,
    SATCHEL_MODEL: 'test-model',
    ...options.env,
  };
  const app = await makeApp({
    ...(options.objects ? { objects: options.objects } : {}),
    ...(options.lambda ? { shortLived: true, answersAfterBackground: true } : {}),
    env,
  });
  const during = options.during ?? (async () => undefined);
  chat.script(
    ...(options.steps ?? [
      async () => {
        await during(app);
        return { reply: REPLY };
      },
      { reply: REPLY },
      { reply: REPLY },
    ]),
  );
  const payload = options.payload ?? PAYLOAD;
  return {
    app,
    chat,
    env,
    /** Creates the session `ops-log` (task `ops`). */
    createOpsLog: () => app.call('POST', '/v1/sessions', { body: { task: 'ops', id: 'ops-log' } }),
    /** Sends the payload signed, as delivery `delivery`. */
    send: (delivery = 'd-1') =>
      app.call('POST', '/v1/hooks/ci', signedDelivery(HOOK_SECRET, payload, delivery)),
    /** The state of every delivery marker under alice's prefix. */
    markers: async (): Promise<string[]> => {
      const out: string[] = [];
      for (const k of await listAll(app.objects, 'ns/alice/'))
        if (k.includes('/hooks/')) {
          const got = await app.objects.get(k);
          out.push(JSON.parse(text(got!.body)).state);
        }
      return out;
    },
    /** The deliveries logged as failed. */
    failures: () => app.logs.find('webhook delivery failed', 'warn'),
  };
}
