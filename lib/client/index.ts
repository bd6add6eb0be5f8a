// The typed Satchel client: fetch only, so it runs in Node, browsers and Workers.
export {
  SatchelClient,
  type CallOptions,
  type ClientOptions,
  type WriteOptions,
} from './client.js';
export { SatchelApiError, SatchelConnectionError } from './errors.js';
export { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
export type * from './types.js';
