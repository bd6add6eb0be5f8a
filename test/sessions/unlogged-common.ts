import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temporary folder. */
export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `satchel-${label}-`));
}

let n = 0;
/** A word no other text holds, whole in the index (letters only). */
export const word = () =>
  `zqw${'bcdfghjklm'[n++ % 10]}${Math.random()
    .toString(36)
    .replace(/[^a-z]/g, '')}x`;
