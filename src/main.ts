/**
 * `node dist/src/main.js` (or `tsx src/main.ts`): the same as `convene serve`, for the process tests
 * and for deployments that start the built server by this path. The composition root is
 * `cli/serve.ts`.
 */
import { runCli } from './cli/commands.js';

await runCli(['serve']);
