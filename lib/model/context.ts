/**
 * What every operation is told about the request it serves: who asks (the device label of the token) and
 * how to keep work alive after the answer. The namespace stays an explicit argument of each operation,
 * since every key is built from it and a wrong default there would cross namespaces.
 */

/** Receives work that must outlive the response: `waitUntil` on Workers, tracked by the process on Node. */
export type Schedule = (work: Promise<unknown>) => void;

/** The per-request context of every operation. */
export interface RequestContext {
  /** Device label of the token (audit). */
  device?: string;
  /** Background work of this request; without it, background work runs unattended. */
  schedule?: Schedule;
}

/** Runs background work with nobody waiting for it (tests, scripts, and requests without a scheduler). */
export const unattended: Schedule = (work) => {
  work.catch(() => undefined);
};

/**
 * Where a webhook delivery stands (lib/hooks/), for a deliver with work after the message (a continue's
 * model turn, lib/continue/): `stored` when an earlier attempt stored the message (only the turn may be
 * owed); else `onStored` is called once the message is stored and before the turn, so that a redelivery
 * after a failed turn, even past the Idempotency-Key's 24 h, runs the turn without storing the message
 * again.
 */
export interface DeliveryProgress {
  stored: boolean;
  onStored(): Promise<void>;
}
