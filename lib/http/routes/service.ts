import { healthSchema } from '../../model/responses.js';
import { route } from '../spec.js';

/** Liveness: storage and embeddings state. */

/** Liveness, storage and embeddings state. */
export const health = route(
  {
    method: 'get',
    path: '/v1/health',
    operationId: 'health',
    tag: 'service',
    summary: 'Liveness, storage and embeddings state',
    description: 'Always 200: `status` is `degraded` when storage does not answer. Needs no token.',
    auth: 'none',
    responses: { 200: { description: 'The service state.', schema: healthSchema } },
  },
  async (c) => {
    const { objects, search } = c.var.services;
    const started = Date.now();
    let storage: { backend: string; ok: boolean; latency_ms?: number; error?: string };
    try {
      await objects.list('health/', { limit: 1 });
      storage = { backend: objects.name, ok: true, latency_ms: Date.now() - started };
    } catch {
      storage = { backend: objects.name, ok: false, error: 'unreachable' };
    }
    return c.json({ status: storage.ok ? 'ok' : 'degraded', storage, embeddings: search.health() });
  },
);
