import type { StoredSession } from '../sessions/schema.js';

/**
 * The save pipeline: the one place every session write passes through on its way to storage, after the
 * operation has built the next state and before it is serialised. Redaction and the size cap plug in
 * here (their own issue); what is here now are the rules the core owns: sticky flags and derived fields.
 */
export interface SaveInput {
  /** The state the operation wants to store (a fresh object the pipeline may change). */
  next: StoredSession;
  /** The stored state it replaces, or null on create. */
  previous: StoredSession | null;
  /** Messages at index >= this were added by this write (the rest were already stored). */
  newFrom: number;
}

export interface SaveOutput {
  session: StoredSession;
  redactions: number;
  dropped_groups: number;
}

export interface SavePipeline {
  apply(input: SaveInput): SaveOutput;
}

/** Core rules: `untrusted_ingested`, `episode_untrusted` and `sandbox` never go back to false; `turns` is derived. */
export function applyCoreRules(next: StoredSession, previous: StoredSession | null): StoredSession {
  next.untrusted_ingested = next.untrusted_ingested || (previous?.untrusted_ingested ?? false);
  next.episode_untrusted = next.episode_untrusted || (previous?.episode_untrusted ?? false);
  next.sandbox = next.sandbox || (previous?.sandbox ?? false);
  next.turns = next.messages.reduce((n, m) => (m.role === 'user' ? n + 1 : n), 0);
  return next;
}

/** The pipeline with only the core rules; the save-pipeline issue replaces it with redaction and the cap. */
export const corePipeline: SavePipeline = {
  apply({ next, previous }) {
    return { session: applyCoreRules(next, previous), redactions: 0, dropped_groups: 0 };
  },
};
