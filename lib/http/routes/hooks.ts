import { hookAcceptedSchema } from '../../model/responses.js';
import { readBodyBytes } from '../body.js';
import { scheduler } from '../context.js';
import { failureProblem } from '../../hooks/hooks.js';
import { StorageUnavailableError } from '../../storage/port.js';
import { param } from '../params.js';
import { problem, retryAfter, route } from '../spec.js';

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
      '(`untrusted_ingested`); a redelivery is a no-op. On Lambda the answer comes after that work ' +
      'and says how it failed: also 500 (the target session is corrupt, as its GET answers) or the ' +
      'status of a failed model turn (502 from the model; 409 while another turn runs on the session, ' +
      'maybe its own earlier attempt), whose detail says the message is stored and that the same ' +
      'delivery sent again runs the turn (once).',
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
      409: problem(
        "(Lambda) Another model turn holds the target session, maybe this delivery's earlier attempt's: " +
          'the message is stored; send the same delivery again after `Retry-After` seconds.',
        retryAfter,
      ),
      413: problem(
        "The body is over `SATCHEL_MAX_BODY_BYTES`; or (Lambda) the delivery's message cannot be stored " +
          "under `SATCHEL_MAX_SESSION_BYTES` (the target session's system prompt fills it): nothing was " +
          'stored, and a redelivery is refused too; or (Lambda) its model reply could not be stored ' +
          'under it, the message stored (the detail says so).',
      ),
      422: problem(
        'The delivery id was used before for another payload (where the answer waits for the work: ' +
          'a `new` hook, Lambda); nothing was written.',
      ),
      500: problem(
        '(Lambda) The target session is corrupt, as its GET answers: nothing was stored, and a ' +
          'redelivery fails the same way until it is repaired or deleted.',
      ),
      502: problem(
        '(Lambda) The model failed, answered an error or timed out: the message is stored; send the ' +
          'same delivery again to run its model turn.',
      ),
      503: problem(
        'Storage unavailable: the delivery was not stored, or (Lambda) it may have been, or its message ' +
          'is stored and its model turn met the outage; send it again.',
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
    // answers only after its background work anyway: there the 202 waits for the message to be stored
    // and its model turn to run, and a failure is answered as what it was (`failureProblem`): a storage
    // error 503, so the sender sends it again (one whose write lost storage's answer saying that it may
    // have been stored); a message the cap refuses 413; a failed turn that the message is stored and a
    // redelivery runs the turn (until 2026-12-06 all were 503 "storage is unreachable", or the 202 of a
    // delivery done: review s59g). Only the marker's `done` failing is still a 202: all is stored.
    const schedule = scheduler(c);
    let claimed!: (session: string | undefined) => void;
    const claim = new Promise<string | undefined>((resolve) => (claimed = resolve));
    const processed = webhooks.process(delivery, { schedule }, claimed);
    if (c.var.services.answersAfterBackground) {
      const done = await processed;
      if ('failed' in done && !done.delivered) throw failureProblem(done);
    } else schedule(processed);
    const session = await webhooks.plannedSession(delivery, claim);
    // A `new` hook's answer waits for the claim that names its session: when that failed (storage),
    // nothing was stored, and the sender is told to send it again rather than that it was accepted.
    if (!session && delivery.hook.session === 'new')
      throw new StorageUnavailableError('the webhook delivery could not be stored; send it again');
    return c.json(
      { accepted: true, delivery: delivery.delivery, ...(session ? { session } : {}) },
      202,
    );
  },
);
