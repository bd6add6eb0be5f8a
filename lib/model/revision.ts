/**
 * The revision a conditional write expects (HTTP `If-Match`): a revision number, several (a list of tags:
 * any one matches), `any` (`*`: whatever is stored, as long as the session exists), or `unmatchable` (no
 * tag in the header is a revision, so none ever matches).
 */
export type ExpectedRevision = number | readonly number[] | 'any' | 'unmatchable';

/** True when a session at `actual` satisfies `expected` (no expectation always does). */
export function revisionMatches(expected: ExpectedRevision | undefined, actual: number): boolean {
  if (typeof expected === 'object') return expected.includes(actual);
  return expected === undefined || expected === 'any' || expected === actual;
}

/** The 412 detail when `expected` does not hold against revision `actual`. */
export function revisionMismatch(expected: ExpectedRevision, actual: number): string {
  const names =
    expected === 'unmatchable'
      ? 'and If-Match names no revision (an ETag such as "3", or a revision number)'
      : typeof expected === 'object'
        ? `none of ${expected.join(', ')}`
        : `not ${expected}`;
  return `the session is at revision ${actual}, ${names}`;
}
