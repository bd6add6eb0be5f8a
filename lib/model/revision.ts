/**
 * The revision a conditional write expects (HTTP `If-Match`): a revision number, `any` (`*`: whatever is
 * stored, as long as the session exists), or `unmatchable` (a tag that is not a revision never matches).
 */
export type ExpectedRevision = number | 'any' | 'unmatchable';

/** True when a session at `actual` satisfies `expected` (no expectation always does). */
export function revisionMatches(expected: ExpectedRevision | undefined, actual: number): boolean {
  return expected === undefined || expected === 'any' || expected === actual;
}
