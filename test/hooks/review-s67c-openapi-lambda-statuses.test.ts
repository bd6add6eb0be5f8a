import { describe, expect, it } from 'vitest';
import { encodeLease } from '../../lib/continue/lease.js';
import { keys } from '../../lib/model/keys.js';
import { utf8 } from '../../lib/storage/port.js';
import { makeApp } from '../http/helpers.js';
import { signedDelivery } from '../support/hook-delivery.js';

// Review s67c #2: on Lambda a webhook's answer waits for its work and says how it failed (review s59g):
// 409 while another turn holds the session, 502 when the model failed, 500 for a corrupt target session.
// The route's description and docs/webhooks.md say so, but /openapi.json declared only 202, 400, 401,
// 404, 413, 422 and 503 for it, so a client generated from the document, or one that checks answers
// against it, met undeclared statuses.

const SECRET = 'openapi-hook-secret-s67c-0123456789';
const hook = (session: string) => ({ secret: SECRET, namespace: 'alice', session });

describe('POST /v1/hooks/{name} declares the statuses it answers on Lambda (review s67c)', () => {
  it('409, 502 and 500, each produced by a delivery, as documented', async () => {
    // As functions/lambda.ts builds the app; a model that cannot be reached, no wait for a lease.
    const app = await makeApp({
      shortLived: true,
      answersAfterBackground: true,
      env: {
        SATCHEL_MODEL_URL: 'http://127.0.0.1:9',
        SATCHEL_MODEL: 'm',
        SATCHEL_CONTINUE_WAIT_MS: '0',
        SATCHEL_HOOKS: JSON.stringify({
          busy: hook('busy'),
          down: hook('down'),
          bad: hook('bad'),
        }),
      },
    });
    for (const id of ['busy', 'down', 'bad'])
      expect((await app.call('POST', '/v1/sessions', { body: { id, task: 't' } })).status).toBe(
        201,
      );
    // Another turn holds `busy`; `bad`'s object is a half-written file.
    await app.objects.put(
      keys.lease('alice', 'busy'),
      encodeLease({ owner: 'another-turn', expiresAt: Date.now() + 60_000 }),
      { ifNoneMatch: '*' },
    );
    await app.objects.put(keys.session('alice', 'bad'), utf8('{"half a file'));

    const doc = (await app.call('GET', '/openapi.json', { token: null })).json;
    const declared = doc.paths['/v1/hooks/{name}'].post.responses;
    for (const [name, status] of [
      ['busy', 409],
      ['down', 502],
      ['bad', 500],
    ] as const) {
      const res = await app.call(
        'POST',
        `/v1/hooks/${name}`,
        signedDelivery(SECRET, '{"event":"deploy"}', `s67c-${name}`),
      );
      expect(res.status, res.text).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const spec = declared[String(status)];
      // Was undefined: the document listed 202, 400, 401, 404, 413, 422 and 503 only.
      expect(spec, `${status} declared`).toBeDefined();
      expect(Object.keys(spec.content)).toEqual(['application/problem+json']);
      for (const [header, h] of Object.entries(spec.headers ?? {}))
        if ((h as { required?: boolean }).required)
          expect(res.headers.get(header), `${status}: ${header}`).not.toBeNull();
    }
    // The 409 says when to send the delivery again, as the continue route's does.
    expect(Object.keys(declared['409'].headers ?? {})).toContain('Retry-After');
  });
});
