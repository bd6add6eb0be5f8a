#!/usr/bin/env node
// The `satchel` command. The CLI is TypeScript (lib/cli/); tsx, a runtime dependency, loads it in this
// process, so `npx satchel …` works from a checkout after `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
const { runFromProcess } = await import('../lib/cli/main.ts');
process.exit(await runFromProcess());
