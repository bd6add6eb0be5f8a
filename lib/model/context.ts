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
