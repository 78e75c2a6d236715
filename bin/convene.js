#!/usr/bin/env node
// The `convene` command (package.json "bin"; `npm start` runs `node bin/convene.js serve`). It loads
// the compiled CLI in this same process, so the signals npm or systemd send reach the server itself.
// It checks what it can before that: the Node version, and that there is a build to load (instead
// of a module-not-found stack trace).
import { existsSync } from 'node:fs';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(`convene: needs Node 24 or later, this is Node ${process.versions.node} (${process.execPath})`);
  process.exit(1);
}
const cli = new URL('../dist/src/cli/index.js', import.meta.url);
if (!existsSync(cli)) {
  console.error('convene: the server is not built (dist/ is missing); run `npm run build` (`npm install` builds it too)');
  process.exit(1);
}
await import(cli.href);
