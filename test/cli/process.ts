import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RunResult } from './run.js';

/** The CLI as a real process (stdin, pipes, files too large for memory), run from lib/cli through tsx. */

const ENTRY = fileURLToPath(new URL('./cli-entry.mts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function run(command: string, args: string[], env: Record<string, string>): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** `satchel <args>` as a process. */
export function satchelProcess(args: string[], env: Record<string, string>): Promise<RunResult> {
  return run(process.execPath, ['--import', 'tsx', ENTRY, ...args], env);
}

/** `cat <file> | satchel <args>`, through bash: stdin is a real pipe, as a shell makes it. */
export function satchelPiped(
  file: string,
  args: string[],
  env: Record<string, string>,
): Promise<RunResult> {
  const command = [process.execPath, '--import', 'tsx', ENTRY, ...args];
  return run('bash', ['-c', 'f="$1"; shift; cat "$f" | "$@"', 'bash', file, ...command], env);
}
