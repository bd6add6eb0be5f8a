import { hookAcceptedSchema } from '../../model/responses.js';
import { readBodyBytes } from '../body.js';
import { scheduler } from '../context.js';
import { unavailable } from '../../model/errors.js';
import { StorageUnavailableError } from '../../storage/port.js';
import { param } from '../params.js';
import { P, problem, route } from '../spec.js';

/** Signed webhooks that continue a session. */

/** A signed webhook that continues a session. */
export const receiveWebhook = route(
  {
    method: 'post',
    path: '/v1/hooks/{name}',
    operationId: 'receiveWebhook',
    tag: 'webhooks',
    summary: 'A signed webhook that continues a session',
    description:
      'The signature is checked over the raw body first (no bearer token). The payload (any ' +
      'body) is stored after the 202 as one user message wrapped as untrusted content ' +
      '(`untrusted_ingested`); a redelivery is a no-op.',
    auth: 'signature',
    rawBody:
      'The payload as the sender sends it (JSON or not); the signature covers its exact ' +
      'bytes. At most `SATCHEL_MAX_BODY_BYTES`.',
    parameters: [
      'HookName',
      'HubSignature',
      'SatchelSignature',
      'SatchelDelivery',
      'GitHubDelivery',
      'GitHubEvent',
    ],
    responses: {
      202: {
        description: 'Verified; stored after the response. `session` when it is known in advance.',
        schema: hookAcceptedSchema,
      },
      400: problem('A delivery header is not 1-255 visible ASCII characters.'),
      401: problem('No signature header, or a bad or stale signature.', {
        'WWW-Authenticate': {
          description: 'A signature is asked for (webhooks.md).',
          required: true,
          schema: { type: 'string', pattern: '^Satchel-Signature ' },
        },
      }),
      404: problem('No webhook with this name.'),
      413: P.tooLarge,
      422: problem(
        'The delivery id was used before for another payload (where the answer waits for the work: ' +
          'a `new` hook, Lambda); nothing was written.',
      ),
      503: problem(
        'Storage unavailable: the delivery was not stored, or (Lambda) it may have been; send it again.',
      ),
    },
  },
  async (c) => {
    const { webhooks, config } = c.var.services;
    const header = (name: string) => c.req.header(name);
    const delivery = await webhooks.verify(param(c, 'name'), header, () =>
      readBodyBytes(c.req.raw, config.maxBodyBytes),
    );
    // Verified: answer now, store after the response (the process on Node, waitUntil on Workers). Lambda
    // answers only after its background work anyway: there the 202 waits for the message to be stored,
    // and a delivery that could not be stored answers 503, so the sender sends it again; one whose write
    // lost storage's answer says that it may have been stored (until 2026-12-06: that it was not).
    const schedule = scheduler(c);
    let claimed!: (session: string | undefined) => void;
    const claim = new Promise<string | undefined>((resolve) => (claimed = resolve));
    let stored = false;
    const processed = webhooks.process(delivery, { schedule }, claimed, () => (stored = true));
    const unstored = () =>
      new StorageUnavailableError('the webhook delivery could not be stored; send it again');
    if (c.var.services.answersAfterBackground) {
      const done = await processed;
      if ('failed' in done && !stored)
        throw done.unknown
          ? unavailable(
              'the delivery may have been stored; send it again with the same delivery id, which ' +
                'stores it at most once',
              2,
            )
          : unstored();
    } else schedule(processed);
    const session = await webhooks.plannedSession(delivery, claim);
    // A `new` hook's answer waits for the claim that names its session: when that failed (storage),
    // nothing was stored, and the sender is told to send it again rather than that it was accepted.
    if (!session && delivery.hook.session === 'new') throw unstored();
    return c.json(
      { accepted: true, delivery: delivery.delivery, ...(session ? { session } : {}) },
      202,
    );
  },
);
