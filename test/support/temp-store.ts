import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { LocalStore } from '../../lib/storage/local.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A LocalStore on a fresh temporary folder, removed after the test file. */
export function tempLocalStore(label: string): LocalStore {
  const dir = mkdtempSync(path.join(tmpdir(), `satchel-${label}-`));
  dirs.push(dir);
  return new LocalStore(dir);
}
