import type { Message, StoredSession } from '../../lib/model/session.js';
import type { Redactor } from '../../lib/pipeline/redact.js';
import { createSavePipeline, type SaveOutput } from '../../lib/pipeline/save.js';

/** A new session holding `messages`, every flag off (the save pipeline's tests). */
export function bareSession(
  messages: Message[],
  extra: Partial<StoredSession> = {},
): StoredSession {
  return {
    id: 's',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    model: '',
    provider: '',
    turns: 0,
    task: 'task',
    sandbox: false,
    messages,
    external_refs: [],
    untrusted_ingested: false,
    episode_untrusted: false,
    episode_taint_tracked: false,
    revision: 1,
    ...extra,
  };
}

/** Saves a new session of one message through a pipeline of `redactor` (a 1 MiB cap). */
export function saveOne(redactor: Redactor, message: Message, knownValues?: string[]): SaveOutput {
  const pipeline = createSavePipeline({ redactor, rulesVersion: 't', maxSessionBytes: 1 << 20 });
  return pipeline.apply({
    next: bareSession([message]),
    previous: null,
    ...(knownValues ? { knownValues } : {}),
  });
}
