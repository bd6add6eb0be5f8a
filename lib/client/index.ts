// The typed Satchel client: fetch only, so it runs in Node, browsers and Workers.
export {
  DEFAULT_CONTINUE_TIMEOUT_MS,
  DEFAULT_DEADLINE_MS,
  DEFAULT_TIMEOUT_MS,
  SatchelClient,
  type CallOptions,
  type ClientOptions,
  type WriteOptions,
} from './client.js';
export { SatchelApiError, SatchelConnectionError, SatchelResponseError } from './errors.js';
export { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
export type * from './types.js';
