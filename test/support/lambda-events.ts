/** What the Lambda entry answers, as the tests read it. */
export interface LambdaResult {
  statusCode: number;
  headers: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  body: string;
  isBase64Encoded?: boolean;
}

/**
 * An API Gateway HTTP API (payload 2.0) or function URL event as AWS sends it: at `host`, through `stage`
 * (`$default`: none in the path), with a JSON `body` when one is given.
 */
export function httpApiEvent(
  method: string,
  path: string,
  {
    host,
    body,
    headers = {},
    stage = '$default',
  }: { host: string; body?: unknown; headers?: Record<string, string>; stage?: string },
) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      host,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    requestContext: {
      domainName: host,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' },
      requestId: 'r',
      routeKey: '$default',
      stage,
      timeEpoch: Date.now(),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    isBase64Encoded: false,
  };
}
