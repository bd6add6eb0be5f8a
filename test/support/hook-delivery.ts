import { createHmac } from 'node:crypto';

/**
 * The request options of a webhook delivery signed as Satchel's own header asks (`X-Satchel-Signature:
 * t=<now>,v1=<HMAC-SHA256 of "<t>.<body>">`), with its delivery id: for `app.call('POST', '/v1/hooks/…')`.
 */
export function signedDelivery(
  secret: string,
  body: string,
  delivery: string,
  contentType = 'application/json',
) {
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return {
    token: null,
    raw: body,
    headers: {
      'content-type': contentType,
      'x-satchel-signature': `t=${t},v1=${v1}`,
      'x-satchel-delivery': delivery,
    },
  };
}
