/**
 * How long Satchel remembers a request, one rule for all of them: an Idempotency-Key's write record in the
 * session, the session a keyed `continue` on `latest` chose, and a delete's tombstone in the manifest.
 * A client retrying within this window gets the first answer; after it, the request is new.
 */
export const RETENTION_MS = 24 * 3600_000;
