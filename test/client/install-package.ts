import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { buildClientPackage, clientPackageDir } from '../../scripts/build.js';

const root = resolve(__dirname, '..', '..');

export interface InstalledPackage {
  /** The temporary project: package.json, node_modules/satchel from the tarball. */
  dir: string;
  tarball: string;
  remove(): void;
}

/**
 * Builds the client package, packs it with `npm pack` and installs the tarball into a fresh project, as a
 * user would, offline (the package has no dependencies). `link` names packages of this repository's
 * node_modules to link into the project too (the frameworks the adapters are for, tsx for examples).
 */
export async function installClientPackage(link: string[] = []): Promise<InstalledPackage> {
  await buildClientPackage();
  const dir = mkdtempSync(join(tmpdir(), 'satchel-package-'));
  const packed = join(dir, 'packed');
  mkdirSync(packed);
  execFileSync(
    'npm',
    ['pack', clientPackageDir, '--ignore-scripts', '--pack-destination', packed],
    {
      stdio: 'pipe',
    },
  );
  const tarball = join(
    packed,
    readdirSync(packed).find((f) => f.endsWith('.tgz'))!,
  );
  const project = join(dir, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'satchel-user', private: true, type: 'module' }),
  );
  execFileSync(
    'npm',
    ['install', tarball, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'],
    { cwd: project, stdio: 'pipe' },
  );
  for (const name of link) {
    const target = join(project, 'node_modules', name);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), target, 'dir');
  }
  return { dir: project, tarball, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
