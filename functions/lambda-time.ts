// The Lambda entry's time limit: an invocation stops at the function's timeout, where its answer is lost
// (the caller gets Lambda's bare error, or API Gateway's own 503 for a write carried out) and its work is
// cut anywhere. So the entry answers by a deadline taken from the time the invocation has left.
import type { Logger } from '../lib/model/log.js';
import type { Background } from '../lib/server/background.js';

/** Time kept after the deadline to return the answer (gzip of a large one, its 6 MB of JSON). */
export const ANSWER_MARGIN_MS = 2_000;
/**
 * Time kept between the end of a model turn and the deadline: the 502 "message stored" problem after a
 * turn cut off, the turn's lease released, and storing a reply that came in time.
 */
export const TURN_MARGIN_MS = 3_000;

/** The invocation's context as far as the entry reads it (the tests' contexts may have nothing). */
export interface InvocationContext {
  getRemainingTimeInMillis?: () => number;
}

/** When the entry must answer (ms since the epoch), or undefined when the context does not say. */
export function deadlineOf(context: unknown, now = Date.now()): number | undefined {
  const remaining = (context as InvocationContext | undefined)?.getRemainingTimeInMillis?.();
  if (typeof remaining !== 'number' || !Number.isFinite(remaining)) return undefined;
  return now + remaining - ANSWER_MARGIN_MS;
}

/**
 * Waits for the background work (records, index, purges of a delete) until `deadline`: what is not done
 * by then is logged, and goes on when this instance's next invocation thaws it (it is lost if the instance
 * is never invoked again). An answer that waited longer would be no answer at all.
 */
export async function drainBy(
  background: Background,
  deadline: number | undefined,
  log: Logger,
  answered: { method: string; status: number },
): Promise<void> {
  const started = Date.now();
  const drained = background.drain().then(() => true);
  if (deadline === undefined) return void (await drained);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - started));
  });
  try {
    if (await Promise.race([drained, late])) return;
  } finally {
    clearTimeout(timer);
  }
  log.warn(
    'background work left unfinished at the invocation deadline: it goes on when this instance is ' +
      'invoked again (records of the request, index upkeep, the purges of a delete)',
    { ...answered, waited_ms: Date.now() - started },
  );
}
