#!/usr/bin/env node
// The `satchel` command of the client package: dist/cli.js is the CLI bundled for Node (lib/cli/).
const cli = await import('../dist/cli.js');
process.exit(await cli.runFromProcess());
