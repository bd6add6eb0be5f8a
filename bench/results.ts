import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Writes one section of a results file, keeping every other section: each benchmark (run.ts, search,
 * continue, import, builds) owns its sections of bench/results.json, and they run one after another.
 * `replacer` (run.ts's units) applies to the sections written, not to the others.
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
  // The replacer formats the sections written now, never the other benchmarks' sections.
  for (const [name, section] of Object.entries(sections))
    results[name] = replacer ? JSON.parse(JSON.stringify(section, replacer as never)) : section;
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
}
