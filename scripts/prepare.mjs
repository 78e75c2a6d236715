// `prepare` (npm runs it after `npm install`/`npm ci` in a checkout, and before `npm pack`): builds
// dist/ once, so that `npm start` runs the built server directly, and the typed client's
// packages/client/dist/, so that the workspace is importable as installed (the client has no
// `prepare` of its own, which npm would run as well; its `prepack` builds it again before a pack). Without the dev dependencies
// (`npm install --omit=dev`) there is no compiler: the install still succeeds, and says where a
// build comes from (`npm start` says it again if dist/ is missing).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

let compiler;
try {
  compiler = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  const built = existsSync(new URL('../dist/src/cli/index.js', import.meta.url));
  console.warn(
    built
      ? 'convene: dev dependencies are not installed; keeping the existing dist/'
      : 'convene: dev dependencies are not installed, so dist/ was not built; build where they are (`npm run build`) or install the packed package (`npm pack`)',
  );
  process.exit(0);
}
// Each build starts from an empty output: tsc never removes what it wrote for sources since moved or
// deleted (src/client/ moved to packages/client/), and the packed server must not carry those.
for (const [project, out] of [
  ['tsconfig.build.json', 'dist'],
  ['packages/client/tsconfig.json', 'packages/client/dist'],
]) {
  rmSync(new URL(`../${out}`, import.meta.url), { recursive: true, force: true });
  const build = spawnSync(process.execPath, [compiler, '-p', project], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
