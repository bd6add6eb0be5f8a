// Review s63f, finding 4. A password told in prose with "to" was stored: "I set the admin password to X",
// "the password has been reset to X" (how an agent reports what it did), while "the password is X" was
// redacted. The prose rules now take `to` after a verb of setting a few words before the name, and
// `has been` and `reset to`/`changed to` after it; `secret-in-prose` (keys, tokens) the same. The values
// keep their checks (a digit or a symbol; for keys 16 characters), and `to` after any other verb (`send
// the password to alice@…`) is not a value's start.
import { describe, expect, it } from 'vitest';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

describe('a password told in prose with "to"', () => {
  it.each([
    `I set the admin password to ${PW}.`,
    `Done: I've changed the root password to ${PW} as requested.`,
    `The password has been reset to ${PW}`,
  ])('is not stored: %s', async (text) => expect(await storedHolders('true', text)).toEqual([]));

  it('the other forms, and keys', () => {
    for (const text of [
      `I reset the password to ${PW}`,
      `the passphrase was changed to ${PW}`,
      `the password is now ${PW}`,
      `I set the signing key to 4f9c2b7e1d3a5c8f9e0b7a6d`,
      `The API token has been reset to 4f9c2b7e1d3a5c8f9e0b7a6d`,
    ])
      expect(redact(text), text).not.toMatch(/hunter2Quux77Zed|4f9c2b7e1d3a5c8f9e0b7a6d/);
  });

  it('"to" after another verb, and words, stay', () => {
    for (const text of [
      'Please send the password to alice42@corp.com',
      'Set up the VPN and then send the password to alice42@corp.com',
      'set the password to expire in 90 days',
      'the password to the wifi is on the fridge',
      'I set the key to use to the new one',
      'The password is incorrect',
    ])
      expect(redact(text)).toBe(text);
  });
});
