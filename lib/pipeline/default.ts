import { createRedactor } from './redact.js';
import { rules } from './rules.js';
import { createSavePipeline, type SavePipeline } from './save.js';

/**
 * The production save pipeline: every rule of the table, plus the configured known secret values.
 * `rulesVersion` changes with the table or the configured values, so a stored session saved under an
 * older table is scanned whole on its next save.
 */
export function defaultPipeline(options: {
  maxSessionBytes: number;
  knownValues?: string[];
}): SavePipeline {
  const knownValues = options.knownValues ?? [];
  const signature =
    rules.map((r) => `${r.id}:${r.pattern.source}:${r.keywords.join(',')}`).join('\n') +
    '\n' +
    knownValues.join('\n');
  return createSavePipeline({
    redactor: createRedactor(rules, { knownValues }),
    rulesVersion: fnv32(signature),
    maxSessionBytes: options.maxSessionBytes,
  });
}

function fnv32(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}
