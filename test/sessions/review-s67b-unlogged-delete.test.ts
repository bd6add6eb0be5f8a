// Review s67b: a DELETE whose log record failed erases through `purgeUnlogged`: the manifest's purge,
// then the search indexes', whose view of what is live comes from the manifest. When the manifest's purge
// failed too (its root PUT, once), the indexes' purge ran anyway, found the session still live in the
// manifest's settled view, and kept its record with the task and text; nothing ran it again, so the text
// stayed in `x/d/<id>/…` for good in a quiet namespace. The indexes' purge now waits for the manifest's,
// which is retried (contract v1.1, "Deleted means gone").
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';
import { makeApp, settleAll } from '../http/helpers.js';
import { failingPuts } from '../support/failing-puts.js';
import { holders } from '../support/holders.js';

describe('a DELETE answered 204 whose log record failed, with the manifest purge after it', () => {
  for (const variant of ['log', 'log+root', 'root'] as const)
    it(`${variant} failing once: no object keeps the session's text`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 's67b-unlogged-'));
      const { store, armed } = failingPuts(new LocalStore(dir));
      const app = await makeApp({ objects: store });
      const word = 'zqunloggedx';
      const user = (content: string) => [{ role: 'user', content }];
      await app.call('POST', '/v1/sessions', {
        body: { id: 'keeper', task: 'keeper', messages: user('keeper words') },
      });
      const made = await app.call('POST', '/v1/sessions', {
        body: { id: 'doomed', task: `task ${word}`, messages: user(`hello ${word}`) },
      });
      expect(made.status).toBe(201);
      await app.call('POST', '/v1/sessions/doomed/messages', {
        body: { messages: [{ role: 'assistant', content: `more ${word}` }] },
      });
      await settleAll(app);
      // A search: the index now holds a record of the session with its text.
      await app.call('POST', '/v1/session_search', { body: { action: 'search', query: word } });
      await settleAll(app);
      expect(holders(dir, [word]).some((k) => k.includes('/x/'))).toBe(true);
      if (variant.includes('log')) armed.push(/\/m\/l\//);
      if (variant.includes('root')) armed.push(/\/m\/r\//);
      expect((await app.call('DELETE', '/v1/sessions/doomed')).status).toBe(204);
      await settleAll(app);
      await new Promise((r) => setTimeout(r, 4000)); // the erasing's retries, after 1 s and 2 s
      await settleAll(app);
      expect(armed).toEqual([]); // every failure armed happened
      expect(holders(dir, [word])).toEqual([]);
    }, 60_000);
});
