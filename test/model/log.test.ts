// The logger: every string field redacted, and cut only after redaction.
import { describe, expect, it } from 'vitest';
import { createLogger, describeError } from '../../lib/model/log.js';
import { createRedactor } from '../../lib/pipeline/redact.js';
import { rules } from '../../lib/pipeline/rules.js';

const TOKEN = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';

describe('logger', () => {
  it('a secret where a long error message is cut is redacted whole, never logged in part', () => {
    const redactor = createRedactor(rules);
    const lines: string[] = [];
    const log = createLogger({
      redact: (s) => redactor.redact(s).text,
      write: (_level, line) => void lines.push(line),
    });
    // The token straddles the old 300-character cut of describeError, and the field's 1,000.
    for (const at of [290, 995]) {
      const err = new Error('x'.repeat(at - 'Error: '.length - 1) + ' ' + TOKEN + ' and more');
      log.warn('request failed', { error: describeError(err) });
    }
    for (const line of lines) {
      expect(line).not.toContain('ghp_');
      expect(line).not.toContain(TOKEN.slice(4, 12));
    }
    expect(lines[0]).toContain('[REDACTED]');
    // Fields stay bounded.
    expect(JSON.parse(lines[1]!).error.length).toBeLessThanOrEqual(1000);
  });
});
