import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every file under `dir` (a local store's folder) holding one of `needles`, as `path: needle`. */
export function holders(dir: string, needles: string[]): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else {
        const body = readFileSync(full, 'latin1');
        for (const n of needles)
          if (body.includes(n)) found.push(`${full.slice(dir.length)}: ${n}`);
      }
    }
  };
  walk(dir);
  return found;
}
