// `prepare` (npm runs it after `npm install`/`npm ci` in a checkout, and before `npm pack`): builds
// dist/ once, so that `npm start` runs the built server directly. Without the dev dependencies
// (`npm install --omit=dev`) there is no compiler: the install still succeeds, and says where a
// build comes from (`npm start` says it again if dist/ is missing).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
const build = spawnSync(process.execPath, [compiler, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
process.exit(build.status ?? 1);
