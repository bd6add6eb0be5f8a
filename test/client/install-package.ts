import { execFile } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { buildClientPackage, clientPackageDir } from '../../scripts/build.js';

const root = resolve(__dirname, '..', '..');
const run = promisify(execFile);

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
  const dir = mkdtempSync(join(tmpdir(), 'satchel-package-'));
  // Built in a copy of packages/client: test files running at once never pack each other's half-built dist.
  const source = join(dir, 'package');
  for (const f of ['package.json', 'README.md', 'bin'])
    cpSync(join(clientPackageDir, f), join(source, f), { recursive: true });
  await buildClientPackage(source);
  const packed = join(dir, 'packed');
  mkdirSync(packed);
  await run('npm', ['pack', source, '--ignore-scripts', '--pack-destination', packed]);
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
  await run(
    'npm',
    ['install', tarball, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'],
    {
      cwd: project,
    },
  );
  for (const name of link) {
    const target = join(project, 'node_modules', name);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), target, 'dir');
  }
  return { dir: project, tarball, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
