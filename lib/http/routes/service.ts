import { healthSchema } from '../../model/responses.js';
import type { ObjectStore, StoragePing } from '../../storage/port.js';
import { probe } from '../../storage/retry.js';
import { route } from '../spec.js';

/** The health probe's deadline: the answer comes within 2 s even when storage never answers. */
export const HEALTH_PING_MS = 1500;

/** The last failed probe of each store, so health can say what went wrong even after recovery. */
const lastFailure = new WeakMap<ObjectStore, { error: string; at: string }>();

/** Liveness, storage and embeddings state, and whether a model is configured. */
export const health = route(
  {
    method: 'get',
    path: '/v1/health',
    operationId: 'health',
    tag: 'service',
    summary: 'Liveness, storage and embeddings state',
    description:
      'Always 200 within 2 s; `status` is `degraded` when storage errs or does not answer ' +
      'within 1.5 s. Needs no token: it shows no secrets or local paths.',
    auth: 'none',
    responses: { 200: { description: 'The service state.', schema: healthSchema } },
  },
  async (c) => {
    const { objects, search, config } = c.var.services;
    const ping = await pingStore(objects);
    if (!ping.ok)
      lastFailure.set(objects, {
        error: ping.error ?? ping.reason ?? 'error',
        at: new Date().toISOString(),
      });
    const last = lastFailure.get(objects);
    const storage = {
      backend: publicBackend(objects.name),
      ok: ping.ok,
      latency_ms: ping.latencyMs,
      ...(ping.reason ? { reason: ping.reason } : {}),
      ...(!ping.ok && ping.error ? { error: ping.error } : {}),
      ...(last ? { last_error: last.error, last_error_at: last.at } : {}),
    };
    return c.json({
      status: ping.ok ? 'ok' : 'degraded',
      storage,
      embeddings: search.health(),
      model: { configured: Boolean(config.model) },
    });
  },
);

/** The store's own probe, or one listing under the deadline for stores without one. */
function pingStore(objects: ObjectStore): Promise<StoragePing> {
  if (objects.ping) return objects.ping(HEALTH_PING_MS);
  return probe(
    HEALTH_PING_MS,
    () => objects.list('health/', { limit: 1 }),
    () => ({ reason: 'error', error: 'storage answered with an error' }),
  );
}

/** `local:/home/me/.satchel` → `local`: an unauthenticated caller learns the kind, not the path. */
function publicBackend(name: string): string {
  return name.startsWith('local:') ? 'local' : name;
}
