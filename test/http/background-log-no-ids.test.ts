import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { scheduler, type Env } from '../../lib/http/context.js';
import type { Services } from '../../lib/server/services.js';
import { captureLogs } from '../support/logs.js';

// SATCHEL_LOG (docs/configuration.md): "never a token, a body or a raw id". On Workers a failed background
// task (waitUntil) was logged with String(err), which keeps a storage error's key (namespace and session
// id) and the error's whole text; the Node path (lib/server/background.ts) used describeError. Both do now
// (review s61c, suspected item).
const ID = 'client-acme-merger-plan';

describe('a failed background task on Workers', () => {
  it('is logged without the key or the id it names', async () => {
    const logs = captureLogs();
    const services = { log: logs, background: { track: () => {} } } as unknown as Services;
    const app = new Hono<Env>();
    app.use(async (c, next) => {
      c.set('services', services);
      await next();
    });
    app.get('/', (c) => {
      scheduler(c)(
        Promise.reject(new Error(`the object at ns/acme/sessions/${ID}.json is not valid JSON`)),
      );
      return c.text('ok');
    });
    const waits: Promise<unknown>[] = [];
    const ctx = {
      waitUntil: (p: Promise<unknown>) => void waits.push(p),
      passThroughOnException() {},
      props: {},
    };
    const res = await app.fetch(new Request('http://x/'), {}, ctx);
    expect(res.status).toBe(200);
    await Promise.all(waits);
    const [line] = logs.find('background work failed', 'warn');
    expect(line!.error).toBe('Error: the object at <key> is not valid JSON');
    expect(JSON.stringify(logs.records)).not.toContain(ID);
  });
});
