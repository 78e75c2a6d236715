/**
 * `node dist/src/main.js` (or `tsx src/main.ts`): the same as `convene serve`, for the process tests
 * and for deployments that start the built server by this path. Every service is built in
 * `server.ts` (the one composition root); `cli/serve.ts` runs it and handles signals.
 */
import { runCli } from './cli/commands.js';

await runCli(['serve']);
