/**
 * The `convene` command from the sources or a build: `node dist/src/cli/index.js <command>` (what
 * bin/convene.js loads), `tsx src/cli/index.ts <command>` (the npm scripts of a checkout).
 */
import { runCli } from './commands.js';

await runCli(process.argv.slice(2));
