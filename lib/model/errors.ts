/**
 * One error type per failure kind. Everything below HTTP throws these; `lib/http/problem.ts` is the one
 * place that turns them (and storage errors) into RFC 9457 problem responses.
 */
export interface FieldError {
  path: string;
  message: string;
}

export class SatchelError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    detail: string,
    readonly extra: { errors?: FieldError[]; retryAfter?: number } = {},
  ) {
    super(detail);
    this.name = 'SatchelError';
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) =>
  new SatchelError(400, 'Bad Request', detail, errors ? { errors } : {});
export const unauthorized = (detail: string) => new SatchelError(401, 'Unauthorized', detail);
export const forbidden = (detail: string) => new SatchelError(403, 'Forbidden', detail);
export const notFound = (detail: string) => new SatchelError(404, 'Not Found', detail);
/** 409; `retryAfter` (seconds) when waiting will help, e.g. another continue holds the session's lease. */
export const conflict = (detail: string, retryAfter?: number) =>
  new SatchelError(409, 'Conflict', detail, retryAfter !== undefined ? { retryAfter } : {});
export const preconditionFailed = (detail: string) => new SatchelError(412, 'Precondition Failed', detail);
export const payloadTooLarge = (detail: string) => new SatchelError(413, 'Content Too Large', detail);
export const unsupportedMediaType = (detail: string) => new SatchelError(415, 'Unsupported Media Type', detail);
export const unprocessable = (detail: string) => new SatchelError(422, 'Unprocessable Content', detail);
export const preconditionRequired = (detail: string) => new SatchelError(428, 'Precondition Required', detail);
export const unavailable = (detail: string, retryAfter = 1) =>
  new SatchelError(503, 'Service Unavailable', detail, { retryAfter });
/** 502: an upstream the request depends on (the continue model) failed or timed out. */
export const badGateway = (detail: string) => new SatchelError(502, 'Bad Gateway', detail);
