import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Writes one section of a results file, keeping every other section: each benchmark (run.ts, search,
 * continue, import, builds) owns its sections of bench/results.json, and they run one after another.
 */
export function writeSections(
  file: string,
  sections: Record<string, unknown>,
  replacer?: (key: string, value: unknown) => unknown,
): void {
  let results: Record<string, unknown> = {};
  try {
    results = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    results = {};
  }
  Object.assign(results, sections);
  writeFileSync(file, JSON.stringify(results, replacer as never, 2) + '\n');
}
