// Review s65i, F5. `echo-piped-password` looked 200 characters past every `echo …|` for the command that
// reads a password on its input (`docker login --password-stdin`, `chpasswd`, `sudo -S`), past other
// `echo`s too: text repeating `echo abc|` was redacted at 10 MB/s (bench/redaction-adversarial.ts), and a
// word echoed into another command before such a line was taken for its password. The look stops at the
// next `echo`.
import { describe, expect, it } from 'vitest';
import { PW, redact } from './review-s63f-stored.js';

describe('echo piped into a command that reads a password', () => {
  it('a word echoed into another command first is kept', () => {
    for (const text of [
      `echo building | tee log; echo $TOKEN | docker login --password-stdin`,
      `echo step1 | tee -a log && echo done | cat; echo "$PW" | sudo -S true`,
    ])
      expect(redact(text)).toBe(text);
  });

  it('the password piped in is still redacted', () => {
    expect(redact(`echo started | tee log; echo ${PW} | docker login --password-stdin`)).toBe(
      'echo started | tee log; echo [REDACTED] | docker login --password-stdin',
    );
    expect(redact(`echo '${PW}' | sudo -S apt-get update`)).toBe(
      "echo '[REDACTED]' | sudo -S apt-get update",
    );
  });
});
