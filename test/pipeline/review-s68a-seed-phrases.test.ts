// Review s68a, F4: wallet seed phrases (`MNEMONIC="…"`, a `wallet_mnemonic` metadata value), a session
// cookie in a tool call's `cookies` object, and node-provider keys in URL paths were stored in clear.
import { describe, expect, it } from 'vitest';
import { redact } from './review-s63f-stored.js';
import { storedSecrets } from './review-s68a-stored.js';

// A random 12-word BIP-39 phrase (not a published test vector), a Django session id, provider keys.
const SEED = 'orbit velvet lumber crisp naive dolphin shrug ankle wealth spoon fever cactus';
const SESSIONID = 'k3vq9zt8rm2wxy7nb4cl1pd6sf0gh5jq';
const ALCHEMY = 'Qx7Lm2Pz9Wk4Rt8Yb3Nc6Vd1Fh5Gj0Ab';
const INFURA = '9f2c4e6a8b0d1f3e5a7c9b2d4f6e8a0c';

describe('seed phrases, session cookies and RPC keys', () => {
  it('reach no stored object', async () => {
    const dotenv =
      `$ cat .env\nMNEMONIC="${SEED}"\n` +
      `ALCHEMY_URL=https://eth-mainnet.g.alchemy.com/v2/${ALCHEMY}\n` +
      `SEPOLIA_RPC=https://sepolia.infura.io/v3/${INFURA}\n`;
    const body = {
      task: 'deploy the contract',
      metadata: { wallet_mnemonic: SEED },
      messages: [
        { role: 'user', content: 'deploy to sepolia' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'bash', arguments: JSON.stringify({ command: 'cat .env' }) },
            },
            {
              id: 'c2',
              type: 'function',
              function: {
                name: 'http_request',
                arguments: JSON.stringify({
                  url: 'https://app.example.com/api/me',
                  cookies: { sessionid: SESSIONID },
                }),
              },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: dotenv },
        { role: 'tool', tool_call_id: 'c2', content: '{"user":"alice"}' },
      ],
    };
    expect(await storedSecrets(body, [SEED, SESSIONID, ALCHEMY, INFURA])).toEqual([]);
  });

  it('the forms a seed phrase is given in', () => {
    for (const text of [
      `{"mnemonic": "${SEED}"}`,
      `accounts: { mnemonic: "${SEED}" }`,
      `anvil --mnemonic "${SEED}"`,
      `const w = ethers.Wallet.fromPhrase("${SEED}");`,
      `seed phrase: ${SEED}`,
      `RECOVERY_PHRASE='${SEED}'`,
    ])
      expect(redact(text), text).not.toContain('dolphin');
  });

  it('an instruction mnemonic and prose about seed phrases are kept', () => {
    for (const text of [
      '{"address": 4096, "mnemonic": "mov", "op_str": "rax, rbx"}',
      'The mnemonic is a way to remember the order of the planets.',
      'seed phrase: write down these twelve words in order and keep them somewhere safe',
      'https://docs.alchemy.com/v2/reference/api-overview',
    ])
      expect(redact(text)).toBe(text);
  });
});
