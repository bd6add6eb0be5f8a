import type { MiddlewareHandler } from 'hono';
import type { TokenEntry } from '../server/config.js';
import { sha256, timingSafeEqual } from '../model/digest.js';
import { forbidden, unauthorized } from '../model/errors.js';

/** Who is calling: the namespace their token opens, the device label for the audit log, and the scope. */
export interface Caller {
  namespace: string;
  device: string;
  readOnly: boolean;
}

export type AuthVariables = { caller: Caller };

/**
 * Finds the entry for a presented token. The presented token is hashed and compared with every entry's
 * digest in constant time, without stopping at the first match, so timing reveals neither which entry
 * nor how much of a token matched. A presented `sha256:<hex>` string is just hashed like any other
 * token, so the stored digest form never works as a credential.
 */
export async function resolveToken(
  entries: TokenEntry[],
  presented: string,
): Promise<Caller | null> {
  const digest = await sha256(presented);
  let found: TokenEntry | null = null;
  for (const entry of entries) {
    if (timingSafeEqual(entry.digest, digest) && !found) found = entry;
  }
  return found
    ? { namespace: found.namespace, device: found.device, readOnly: found.readOnly }
    : null;
}

/**
 * Why every token is refused when none is configured (Workers and Lambda have no open mode): the usual
 * cause is `wrangler dev` without a `.dev.vars` file.
 */
export const NO_TOKENS_CONFIGURED =
  'no SATCHEL_TOKENS is configured on this server, so no token can be accepted: set SATCHEL_TOKENS ' +
  '(namespace[/device]=token, comma-separated; for wrangler dev in .dev.vars, e.g. ' +
  'SATCHEL_TOKENS="alice/laptop=tok_1") and send Authorization: Bearer <token>';

/**
 * Bearer-token middleware; with `tokens === null` (local open mode) everyone is namespace `default`; with
 * an empty list (no SATCHEL_TOKENS where open mode is not allowed) every request is 401 saying so.
 */
export function bearerAuth<E extends { Variables: AuthVariables }>(
  tokens: TokenEntry[] | null,
): MiddlewareHandler<E> {
  return async (c, next) => {
    if (tokens === null) {
      c.set('caller', { namespace: 'default', device: 'local', readOnly: false });
      return next();
    }
    if (tokens.length === 0) throw unauthorized(NO_TOKENS_CONFIGURED);
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized('send Authorization: Bearer <token>');
    const caller = await resolveToken(tokens, match[1]!);
    // RFC 6750 §3.1: a token that was sent but is not accepted is `invalid_token`.
    if (!caller)
      throw unauthorized('the token is not known', 'Bearer realm="satchel", error="invalid_token"');
    c.set('caller', caller);
    return next();
  };
}

/** Refuses read-only tokens on routes that write. */
export const requireWrite: MiddlewareHandler<{ Variables: AuthVariables }> = async (c, next) => {
  if (c.get('caller').readOnly) throw forbidden('this token is read-only');
  return next();
};
