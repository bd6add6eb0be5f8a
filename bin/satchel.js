#!/usr/bin/env node
// The `satchel` command: runs the CLI as built JavaScript (dist/cli.js, bundled from lib/cli/ by
// `npm run build:cli`, which `npm install` runs through the `prepare` script), so no TypeScript is
// compiled per call.
let cli;
try {
  cli = await import('../dist/cli.js');
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('dist/cli.js'))
    throw err;
  process.stderr.write(
    'satchel: the CLI is not built (dist/cli.js is missing). Run `npm run build:cli` in the Satchel folder;\n' +
      '`npm install` and `npm ci` build it too.\n',
  );
  process.exit(70);
}
process.exit(await cli.runFromProcess());
