// Review s57d, suspected item. A webhook's title (the task of a session a hook creates) was redacted as
// sent, then made one line: a secret whose name and value only its joined lines put together (`password:`
// at a line's end, the value on the next) reached the task. Now the title is redacted again as one line,
// before it is cut to its length.
import { expect, it } from 'vitest';
import { summarize } from '../../lib/hooks/summary.js';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';

const pipeline = defaultPipeline({ maxSessionBytes: 1 << 25 });

it("a secret that only the title's joined lines show is redacted, and counted", () => {
  const value = { type: 'db password:\n  Hq7#Zk2LmP9x' };
  const s = summarize({ hook: 'd', value, raw: JSON.stringify(value) }, (t) =>
    pipeline.redactText(t),
  );
  expect(s.title).toBe(`Webhook d: db password: ${PLACEHOLDER}`);
  expect(s.redactions).toBe(1);
  // A title without secrets is the same one line as before.
  const plain = { type: 'deploy\nfinished' };
  const p = summarize({ hook: 'd', value: plain, raw: JSON.stringify(plain) }, (t) =>
    pipeline.redactText(t),
  );
  expect(p.title).toBe('Webhook d: deploy finished');
  expect(p.redactions).toBe(0);
});
