// A data: URL of millions of short lines (a hostile body, or a file wrapped a few characters a line): one
// regex over all its lines overflowed the regex stack (RangeError: a 500 for the request) until
// 2026-12-04; lines are followed one call at a time now.
import { describe, expect, it } from 'vitest';
import { defaultPipeline } from '../../lib/pipeline/default.js';
import type { StoredSession } from '../../lib/model/session.js';

const now = '2026-12-04T23:00:00.000Z';
const session = (content: string): StoredSession => ({
  id: 'lines',
  created_at: now,
  updated_at: now,
  model: '',
  provider: '',
  turns: 1,
  task: 't',
  sandbox: false,
  messages: [{ role: 'user', content }],
  external_refs: [],
  untrusted_ingested: false,
  episode_untrusted: false,
  episode_taint_tracked: false,
  revision: 1,
});

describe('a data: URL wrapped in millions of lines', () => {
  it('is read whole without overflowing the regex stack, and its secret is redacted', () => {
    const pipeline = defaultPipeline({ maxSessionBytes: 64 * 1024 * 1024 });
    const env = 'x'.repeat(12_000_000) + '\nGITHUB_TOKEN=ghp_' + 'Zq8xW3vN5'.repeat(4) + '\n';
    const wrapped = Buffer.from(env).toString('base64').replace(/.{4}/g, '$&\n');
    const out = pipeline.apply({
      next: session(`data:;base64,${wrapped}`),
      previous: null,
    });
    expect(out.redactions).toBe(1);
    const content = out.session.messages[0]!.content as string;
    const file = Buffer.from(content.slice('data:;base64,'.length), 'base64').toString();
    expect(file.endsWith('\nGITHUB_TOKEN=[REDACTED]\n')).toBe(true);
  });
});
