// The CLI as a process, from the TypeScript under test (dist/cli.js may be older than lib/cli/).
import { runFromProcess } from '../../lib/cli/main.js';

process.exit(await runFromProcess());
