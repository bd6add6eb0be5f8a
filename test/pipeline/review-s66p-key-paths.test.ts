// Review s66p, F7: a file's path under a key's or a token's name (`ssl_key: /etc/ssl/private/server.key`,
// minikube's `client-key: /home/…/client.key`) was redacted whole; a path is never the secret, and an agent
// debugging TLS, SSH or Kubernetes lost which file is used. Lower-case paths now stay, as under `PWD=`.
import { describe, expect, it } from 'vitest';
import { PLACEHOLDER } from '../../lib/pipeline/redact.js';
import { redact } from './review-s63f-stored.js';

describe('paths under key and token names', () => {
  it('stay', () => {
    for (const text of [
      'client-key: /home/me/.minikube/profiles/minikube/client.key',
      'ssl_key: /etc/ssl/private/server.key',
      'client_key: /etc/ssl/client2.key',
      'tls_private_key: /etc/letsencrypt/live/example.com/privkey.pem',
      'private_key: ~/.ssh/id_ed25519',
      'SSH_PRIVATE_KEY=~/.ssh/id_ed25519',
      'PRIVATE_KEY=./certs/dev2.pem',
      'token: /var/run/secrets/kubernetes.io/serviceaccount/token',
      'api_key: ./keys/api2.txt',
    ])
      expect(redact(text)).toBe(text);
  });

  it('keys that start with a slash or hold one are still redacted', () => {
    for (const [text, secret] of [
      ['api_key: /aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789', '/aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789'],
      ['api_key: 9f4b4d48b8ba42c02775ba956695ee96', '9f4b4d48b8ba42c02775ba956695ee96'],
      ['token: ghx8Kd92LmQp0aZ1/x', 'ghx8Kd92LmQp0aZ1/x'],
      ['private_key: /Zx9Qw8Er7Ty6Ui5Op3As2Df1', '/Zx9Qw8Er7Ty6Ui5Op3As2Df1'],
    ] as const)
      expect(redact(text)).toBe(text.replace(secret, PLACEHOLDER));
  });
});
