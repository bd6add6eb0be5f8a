import { beforeEach } from 'vitest';
import { activeCaptures } from './logs.js';

// Quiet when passing, complete when failing: the lines captured by test loggers (test/support/logs.ts)
// during a test are printed only if that test fails.
beforeEach(({ onTestFailed }) => {
  const marks = new Map([...activeCaptures].map((logs) => [logs, logs.records.length]));
  onTestFailed(() => {
    const lines: string[] = [];
    for (const logs of activeCaptures) {
      const from = Math.min(marks.get(logs) ?? 0, logs.records.length);
      for (const record of logs.records.slice(from)) lines.push(JSON.stringify(record));
    }
    if (lines.length > 0)
      console.error(`server log during this test (${lines.length} lines):\n${lines.join('\n')}`);
  });
});
