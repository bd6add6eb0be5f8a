import { describe, expect, it } from 'vitest';

// Review s52c: everywhere else an empty variable means "unset" (parseIntVar: '' is the default).
// functions/lambda.ts put its 4 MiB default *under* process.env, so SATCHEL_MAX_SESSION_BYTES="" (an empty
// parameter of a template) replaced it, parseIntVar then gave the Node default of 32 MiB, and the function
// refused every request: "must be at most 5242880", for a variable the operator left empty.
describe('Lambda: SATCHEL_MAX_SESSION_BYTES set but empty', () => {
  it('takes the Lambda default (4 MiB), as an unset one does', async () => {
    Object.assign(process.env, {
      SATCHEL_TOKENS: 'lam/fn=tok_lambda_empty_0123',
      S3_BUCKET: 'b',
      S3_ENDPOINT: 'http://127.0.0.1:9',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret-value-0123456',
      SATCHEL_LOG: 'off',
      SATCHEL_MAX_SESSION_BYTES: '',
    });
    const errors: unknown[] = [];
    const orig = console.error;
    console.error = (...a: unknown[]) => void errors.push(a.join(' '));
    try {
      const { handler } = (await import('../../functions/lambda.js')) as {
        handler: (e: unknown, c: unknown) => Promise<{ statusCode: number; body: string }>;
      };
      const res = await handler(
        {
          version: '2.0',
          rawPath: '/openapi.json',
          rawQueryString: '',
          headers: { host: 'fn.lambda-url.eu-west-1.on.aws' },
          requestContext: {
            domainName: 'fn.lambda-url.eu-west-1.on.aws',
            http: { method: 'GET', path: '/openapi.json' },
            stage: '$default',
          },
          isBase64Encoded: false,
        },
        {},
      );
      expect(`${res.statusCode} ${res.body.slice(0, 200)}`).toMatch(/^200 /);
      expect(errors).toEqual([]);
    } finally {
      console.error = orig;
    }
  });
});
